# terraform_data.db is gone from the configuration: it is deleted.
resource "terraform_data" "mode" {
  input = sensitive("delete")
}
