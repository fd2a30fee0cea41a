module @calls {
  func.func public @main(%x: tensor<f32>) -> tensor<f32> {
    %0:2 = call @helper(%x) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
    %1 = func.call @"<lambda>"(%0#1) : (tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @helper(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    %0 = stablehlo.negate %a : tensor<f32>
    return %a, %0 : tensor<f32>, tensor<f32>
  }
  func.func private @"<lambda>"(%a: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32>
  }
}
