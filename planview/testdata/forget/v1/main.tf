resource "terraform_data" "leaves_state" {
  input = "kept in the real world"
}

resource "terraform_data" "stays" {
  input = "untouched"
}
