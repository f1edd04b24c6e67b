# terraform_data resources: the built-in resource creates, replaces and
# destroys without any provider download. Lower `instances` or change
# `generation` to see a plan that destroys, held by the demo's rule.
variable "instances" {
  type    = number
  default = 3
}

variable "generation" {
  type    = string
  default = "1"
}

resource "terraform_data" "server" {
  count            = var.instances
  input            = "server-${count.index}"
  triggers_replace = [var.generation]
}

output "servers" { value = terraform_data.server[*].output }
