data "external" "x" {
  program = ["sh", "-c", "echo {}"]
}
