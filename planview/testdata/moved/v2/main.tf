moved {
  from = terraform_data.old_name
  to   = terraform_data.new_name
}

resource "terraform_data" "new_name" {
  input = "kept as it is"
}

moved {
  from = terraform_data.renamed_and_changed
  to   = terraform_data.moved_and_changed
}

resource "terraform_data" "moved_and_changed" {
  input = "after the move"
}
