func.func @main(%b: tensor<2xbf16>, %v: tensor<5xf32>, %s: tensor<3xf32>, %m: tensor<2x3xf32>, %c: tensor<complex<f32>>) -> (tensor<2xbf16>, tensor<2xf32>, tensor<2xi32>, tensor<2x3xf32>, tensor<5xf32>, tensor<5xi1>, tensor<complex<f32>>, tensor<5xf32>) {
  %0 = chlo.lgamma %b : tensor<2xbf16> -> tensor<2xbf16>
  %1:2 = chlo.top_k(%v, k = 2) : tensor<5xf32> -> (tensor<2xf32>, tensor<2xi32>)
  %2 = chlo.broadcast_add %s, %m : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = chlo.tan %v : tensor<5xf32> -> tensor<5xf32>
  %4 = chlo.is_inf %v : tensor<5xf32> -> tensor<5xi1>
  %5 = "chlo.square"(%c) : (tensor<complex<f32>>) -> tensor<complex<f32>>
  %6 = "chlo.sinh"(%v) : (tensor<5xf32>) -> tensor<5xf32>
  return %0, %1#0, %1#1, %2, %3, %4, %5, %6 : tensor<2xbf16>, tensor<2xf32>, tensor<2xi32>, tensor<2x3xf32>, tensor<5xf32>, tensor<5xi1>, tensor<complex<f32>>, tensor<5xf32>
}
