# Fifty terraform_data resources for the dry-run benchmark: a plan with
# real work in it that needs no provider download.
variable "instances" {
  type    = number
  default = 50
}

resource "terraform_data" "node" {
  count = var.instances
  input = {
    name  = "node-${count.index}"
    index = count.index
  }
}

output "nodes" { value = length(terraform_data.node) }
