# The spec's example ("OpenTofu runs", Example): launch with the command set
# to infra/network and a survey field region.
variable "region" { type = string }
output "vpc" { value = "vpc-${var.region}" }
