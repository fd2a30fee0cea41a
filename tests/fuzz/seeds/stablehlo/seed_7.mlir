#loc = loc("f.py":1:1)
module @m attributes {mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<2x3xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<3xf32>) {
    %c = stablehlo.constant dense<"0x0000803F0000004000004040"> : tensor<3xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %1 = "stablehlo.sort"(%0) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %p = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) : (tensor<3xf32>) -> tensor<3xf32>
    %2 = chlo.erf_inv %1 : tensor<3xf32> -> tensor<3xf32>
    stablehlo.custom_call @check.expect_close(%2, %c) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    return %2 : tensor<3xf32> loc(#loc)
  }
}
