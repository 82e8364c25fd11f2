module @m {
  func.func public @main(%arg0: tensor<4294967296x4294967296x16xf32>) -> tensor<4294967296x4294967296x16xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4294967296x4294967296x16xf32>
    return %0 : tensor<4294967296x4294967296x16xf32>
  }
}
