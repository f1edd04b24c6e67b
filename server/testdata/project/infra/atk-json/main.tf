# Attack: a sensitive string answer that is a JSON document (a service
# account key), and a sensitive map answer whose keys are secret.
variable "doc" {
  type = string
}

variable "keyed" {
  type = map(string)
}

resource "terraform_data" "doc" {
  input = var.doc
}

resource "terraform_data" "keyed" {
  input = var.keyed
}
