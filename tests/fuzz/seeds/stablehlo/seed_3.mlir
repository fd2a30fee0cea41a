func.func @main() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f64>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i64>, tensor<complex<f32>>, tensor<f16>, tensor<f64>) {
  %five = stablehlo.constant dense<5.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %halfd = stablehlo.constant dense<0.5> : tensor<f64>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %0 = chlo.lgamma %five : tensor<f32> -> tensor<f32>
  %1 = chlo.digamma %one : tensor<f32> -> tensor<f32>
  %2 = chlo.erf_inv %half : tensor<f32> -> tensor<f32>
  %3 = chlo.erf_inv %halfd : tensor<f64> -> tensor<f64>
  %4 = chlo.erfc %half : tensor<f32> -> tensor<f32>
  %5 = chlo.next_after %one, %two : tensor<f32>, tensor<f32> -> tensor<f32>
  %6 = chlo.bessel_i1e %one : tensor<f32> -> tensor<f32>
  %7 = chlo.polygamma %one, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %a = stablehlo.constant dense<240> : tensor<ui8>
  %b = stablehlo.constant dense<16> : tensor<ui8>
  %8 = "chlo.mulhi"(%a, %b) : (tensor<ui8>, tensor<ui8>) -> tensor<ui8>
  %c = stablehlo.constant dense<-3> : tensor<i64>
  %d = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  %9 = "chlo.mulhi"(%c, %d) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %z = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %10 = "chlo.square"(%z) : (tensor<complex<f32>>) -> tensor<complex<f32>>
  %h = stablehlo.constant dense<2.0> : tensor<f16>
  %11 = chlo.lgamma %h : tensor<f16> -> tensor<f16>
  %q = stablehlo.constant dense<2.0> : tensor<f64>
  %onep = stablehlo.constant dense<1.0> : tensor<f64>
  %12 = chlo.zeta %q, %onep : tensor<f64>, tensor<f64> -> tensor<f64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f64>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i64>, tensor<complex<f32>>, tensor<f16>, tensor<f64>
}
