resource "terraform_data" "in_module" {
  input = "from the module"
}
