resource "terraform_data" "clean" {
  input = "clean"
}
