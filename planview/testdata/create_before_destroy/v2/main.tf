resource "terraform_data" "gateway" {
  input            = "gw"
  triggers_replace = "revision-2"

  lifecycle {
    create_before_destroy = true
  }
}
