# Attack: a value only the state marks sensitive, nested in an object whose
# keys are "value" and "type" (a common shape: a credential's kind and value).
# A replacement prints terraform_data.output's prior value.
variable "generation" {
  type    = string
  default = "1"
}

resource "terraform_data" "cred" {
  input = {
    cred = {
      value = "public-part"
      type  = sensitive("nested-canary-5a5a9b9b")
    }
  }
  triggers_replace = [var.generation]
}
