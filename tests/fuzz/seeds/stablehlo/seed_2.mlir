func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xi32>, %z: tensor<f32>, %zi: tensor<i32>, %p: tensor<i1>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3xi32>, tensor<2x3xf32>, tensor<i32>, tensor<2x3xf32>, tensor<f32>, tensor<i32>) {
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %1:2 = stablehlo.reduce(%x init: %z), (%y init: %zi) across dimensions = [0] : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
      %m = stablehlo.maximum %a, %b : tensor<f32>
      %n = stablehlo.add %c, %d : tensor<i32>
      stablehlo.return %m, %n : tensor<f32>, tensor<i32>
    }
  %2 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %limit = stablehlo.constant dense<10> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %3:2 = stablehlo.while(%i = %zi, %acc = %x) : tensor<i32>, tensor<2x3xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %next = stablehlo.add %i, %one : tensor<i32>
      %acc2 = stablehlo.add %acc, %acc : tensor<2x3xf32>
      stablehlo.return %next, %acc2 : tensor<i32>, tensor<2x3xf32>
    }
  %4 = "stablehlo.if"(%p) ({
    stablehlo.return %z : tensor<f32>
  }, {
    %neg = stablehlo.negate %z : tensor<f32>
    stablehlo.return %neg : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %5 = "stablehlo.case"(%zi) ({
    stablehlo.return %one : tensor<i32>
  }, {
    stablehlo.return %limit : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0, %1#0, %1#1, %2, %3#0, %3#1, %4, %5 : tensor<2xf32>, tensor<3xf32>, tensor<3xi32>, tensor<2x3xf32>, tensor<i32>, tensor<2x3xf32>, tensor<f32>, tensor<i32>
}
