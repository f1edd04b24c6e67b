variable "src" {
  type    = string
  default = "./mod"
}

module "m" {
  source = var.src
}
