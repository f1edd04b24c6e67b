# A sensitive value that reads as one of OpenTofu's action words: the
# plan's secrets are masked wherever they appear in the change set, and
# "delete" is also the action of terraform_data.db, which v2 removes.
resource "terraform_data" "db" {
  input = "primary"
}

resource "terraform_data" "mode" {
  input = sensitive("keep")
}
