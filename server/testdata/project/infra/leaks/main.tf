# The leak classes of issue 9 that the server closes, each printed by tofu
# itself: a plain list and map variable whose survey fields are sensitive
# (tofu prints their elements); a plain variable whose sensitive answer is
# rotated (the next plan prints the old value as the "before" side); and a
# value only the state marks sensitive (terraform_data.output mirrors input
# without the mark, so a replacement prints it).
variable "secret_list" {
  type = list(string)
}

variable "secret_map" {
  type = map(string)
}

variable "rotating" {
  type = string
}

variable "generation" {
  type    = string
  default = "1"
}

resource "terraform_data" "list" {
  input = var.secret_list
}

resource "terraform_data" "map" {
  input = var.secret_map
}

resource "terraform_data" "rotating" {
  input = var.rotating
}

resource "terraform_data" "state_only" {
  input            = sensitive("state-canary-77aa1f3c")
  triggers_replace = [var.generation]
}

output "list" {
  value = var.secret_list
}

output "map" {
  value = var.secret_map
}

# Classes 4 and 5: tofu renders a string NFC-normalised with control and
# non-printing characters escaped (\x1b, \u00a0), and a provisioner prints a
# secret base64-encoded inside a larger value, at offsets 1 and 2.
variable "odd" {
  type    = string
  default = "none"
}

resource "terraform_data" "odd" {
  input = var.odd
}

resource "terraform_data" "b64" {
  triggers_replace = [var.generation]
  provisioner "local-exec" {
    command = "echo off1=$OFF1 off2=$OFF2"
    environment = {
      OFF1 = base64encode("x${var.rotating}tail")
      OFF2 = base64encode("xy${var.rotating}tail")
    }
  }
}
