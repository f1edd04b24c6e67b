resource "terraform_data" "old_name" {
  input = "kept as it is"
}

resource "terraform_data" "renamed_and_changed" {
  input = "before the move"
}
