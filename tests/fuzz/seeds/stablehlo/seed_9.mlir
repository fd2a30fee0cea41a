func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = "stablehlo.multiply"(%0, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = stablehlo.abs %1 : tensor<2xf32>
  %3 = stablehlo.compare  GE, %2, %b,  TOTALORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %4 = stablehlo.select %3, %2, %b : tensor<2xi1>, tensor<2xf32>
  %5 = "stablehlo.compare"(%4, %a) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %6 = stablehlo.convert %5 : (tensor<2xi1>) -> tensor<2xf32>
  return %6 : tensor<2xf32>
}
