resource "terraform_data" "x" {
  input = "x"
