resource "terraform_data" "policy" {
  input = file("${path.module}/policy.json")
}
