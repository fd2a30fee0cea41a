func.func @main(%x: tensor<2x3xf32>, %u: tensor<?x3xf32>) -> (tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<?x3xf32>) {
  %shape = stablehlo.constant dense<[4, 2, 3]> : tensor<3xi64>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1, 2] : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<4x2x3xf32>
  %s2 = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %1 = stablehlo.dynamic_reshape %x, %s2 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %start = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %limit = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %stride = stablehlo.constant dense<1> : tensor<2xi64>
  %2 = stablehlo.real_dynamic_slice %x, %start, %limit, %stride : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
  %3 = stablehlo.get_dimension_size %u, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %4 = stablehlo.add %u, %u : tensor<?x3xf32>
  return %0, %1, %2, %3, %4 : tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<?x3xf32>
}
