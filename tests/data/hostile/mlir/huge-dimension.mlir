module @m {
  func.func public @main(%arg0: tensor<99999999999999999999x8xf32>) -> tensor<99999999999999999999x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<99999999999999999999x8xf32>
    return %0 : tensor<99999999999999999999x8xf32>
  }
}
