module @m {
  func.func public @main(%arg0: tensor<8x8xf32>) -> tensor