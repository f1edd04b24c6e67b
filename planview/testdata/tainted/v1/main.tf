resource "terraform_data" "worker" {
  input = "build 41"
}
