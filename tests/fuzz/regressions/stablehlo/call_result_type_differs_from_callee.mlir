func.func @main() -> tensor<1xf32> {
  %0 = call @f() : () -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
func.func private @f() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
