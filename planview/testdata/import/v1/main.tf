resource "terraform_data" "already_managed" {
  input = "here before"
}
