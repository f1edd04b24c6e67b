data "local_command" "l" {
  command = "true"
}
