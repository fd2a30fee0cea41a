func.func @main() -> (tensor<2xf32>, tensor<2x2xi32>, tensor<2x2xbf16>, tensor<2xi1>, tensor<complex<f32>>, tensor<3xf32>, tensor<2xi4>, tensor<ui8>, tensor<4xui8>, tensor<f16>, tensor<f16>, tensor<100x100xf32>, tensor<2xf64>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  %1 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %2 = stablehlo.constant dense<1.5> : tensor<2x2xbf16>
  %3 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %4 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>
  %5 = stablehlo.constant dense<[0x7FC00000, 0xFF800000, 0x7F800001]> : tensor<3xf32>
  %6 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>
  %7 = stablehlo.constant dense<255> : tensor<ui8>
  %8 = stablehlo.constant dense<"0xFF"> : tensor<4xui8>
  %9 = stablehlo.constant dense<"0x003C"> : tensor<f16>
  %10 = stablehlo.constant dense<0.1> : tensor<f16>
  %11 = stablehlo.constant dense<0.0> : tensor<100x100xf32>
  %12 = stablehlo.constant dense<[1.000000e-01, -2.5E+10]> : tensor<2xf64>
  %13 = stablehlo.constant dense<"0x000000000000F03F0000000000000040000000000000084000000000000010C0"> : tensor<2xcomplex<f64>>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<2xf32>, tensor<2x2xi32>, tensor<2x2xbf16>, tensor<2xi1>, tensor<complex<f32>>, tensor<3xf32>, tensor<2xi4>, tensor<ui8>, tensor<4xui8>, tensor<f16>, tensor<f16>, tensor<100x100xf32>, tensor<2xf64>, tensor<2xcomplex<f64>>
}
