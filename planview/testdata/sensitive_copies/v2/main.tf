# Sensitive values OpenTofu copies unmarked: a terraform_data's output
# mirrors its input without the input's marks, and what reads that output
# is unmarked too. Short values (under 4 bytes) and a boolean, which no
# masker finds inside a longer string.
variable "enabled" {
  type      = bool
  sensitive = true
  default   = true
}

variable "pin_a" {
  type      = string
  sensitive = true
  default   = "q7"
}

variable "pin_b" {
  type      = string
  sensitive = true
  default   = "z9"
}

variable "n_a" {
  type      = number
  sensitive = true
  default   = 7
}

variable "n_b" {
  type      = number
  sensitive = true
  default   = 5
}

variable "use" {
  type    = string
  default = "b"
}

resource "terraform_data" "flag" {
  input = { enabled = var.enabled, label = var.use }
}

resource "terraform_data" "a" {
  input = { pin = var.pin_a, n = var.n_a }
}

resource "terraform_data" "b" {
  input = { pin = var.pin_b, n = var.n_b }
}

locals {
  src = var.use == "a" ? terraform_data.a.output : terraform_data.b.output
}

resource "terraform_data" "doc" {
  input = jsonencode({ pin = local.src.pin, n = local.src.n, label = var.use })
}

resource "terraform_data" "text" {
  input = "first line\n${local.src.pin}\nthird line\n"
}
