# terraform_data resources: the built-in resource needs no provider
# download, so a held apply can be approved after a crash and applied.
variable "instances" {
  type    = number
  default = 2
}

resource "terraform_data" "server" {
  count = var.instances
  input = "server-${count.index}"
}
