#loc1 = loc("x.py":1:2)
#map = affine_map<(d0) -> (d0)>
module @types attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32} {
  func.func @main(%t: tuple<tensor<f32>, tensor<2xi32>>, %k: !stablehlo.token, %d: tensor<?x3xf32>,
                  %e: tensor<?xf32, #stablehlo.bounds<5>> loc(#loc1)) -> tensor<2xi32> {
    %0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<2xi32>>) -> tensor<2xi32> loc(#loc1)
    return %0 : tensor<2xi32> loc("y.py":3:4)
  } loc(#loc1)
} loc(#loc1)
