func.func @main(%v: tensor<4xf32>, %idx: tensor<2x1xi32>, %upd: tensor<2xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.scatter"(%v, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [], index_vector_dim = 1>}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
