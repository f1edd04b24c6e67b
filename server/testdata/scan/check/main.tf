resource "terraform_data" "x" {
  input = "x"
}

check "c" {
  data "external" "in_check" {
    program = ["true"]
  }
  assert {
    condition     = true
    error_message = "never"
  }
}
