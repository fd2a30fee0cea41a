func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>) {
  stablehlo.custom_call @check.expect_close(%x, %x) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  check.expect_eq_const %x, dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_close %x, %x, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>
  "check.expect_almost_eq_const"(%x) <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
  %0:2 = stablehlo.custom_call @foo(%x) {backend_config = "cfg", api_version = 2 : i32} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<f32>
}
