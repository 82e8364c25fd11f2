module @m {
  [31m
}
