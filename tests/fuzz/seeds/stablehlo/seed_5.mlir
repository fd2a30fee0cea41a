func.func @main(%x: tensor<1x3xf32>, %i: tensor<i32>, %cst: tensor<f32>) -> (tensor<5x3x3xf32>, tensor<2x3xi32>, tensor<1x2xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<1x3xf32>) {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<1x3xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<4x2x3xf32>) -> tensor<3x2x4xf32>
  %2 = stablehlo.slice %1 [0:2, 0:2:1, 1:4:2] : (tensor<3x2x4xf32>) -> tensor<2x2x2xf32>
  %3 = stablehlo.concatenate %2, %2, dim = 0 : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<4x2x2xf32>
  %4 = stablehlo.pad %3, %cst, low = [0, 1, 0], high = [1, 0, 0], interior = [0, 0, 1] : (tensor<4x2x2xf32>, tensor<f32>) -> tensor<5x3x3xf32>
  %5 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %6 = stablehlo.dynamic_slice %x, %i, %i, sizes = [1, 2] : (tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  %7 = stablehlo.reverse %x, dims = [1] : tensor<1x3xf32>
  %8 = stablehlo.reshape %x : (tensor<1x3xf32>) -> tensor<3xf32>
  %9 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 3>, strides = array<i64: 1, 1>} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  return %4, %5, %6, %7, %8, %9 : tensor<5x3x3xf32>, tensor<2x3xi32>, tensor<1x2xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<1x3xf32>
}
