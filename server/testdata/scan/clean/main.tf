module "m" {
  source = "./mod"
}

resource "terraform_data" "root" {
  input = "root"
}
