# Attack: two working directories sharing one state (as two directories of
# one remote backend key would). A plain variable whose survey field is
# sensitive.
terraform {
  backend "local" {
    path = "../atk-shared.tfstate"
  }
}

variable "pw" {
  type = string
}

resource "terraform_data" "pw" {
  input = var.pw
}
