# a benign copy committed to the repository: never read
resource "terraform_data" "benign" {
  input = "benign"
}
