# Attack: a local backend with workspace_dir, in a non-default workspace.
# The state lives in envs/WORKSPACE/terraform.tfstate.
terraform {
  backend "local" {
    workspace_dir = "envs"
  }
}

variable "generation" {
  type    = string
  default = "1"
}

resource "terraform_data" "state_only" {
  input            = sensitive("ws-canary-0d0e0a0f")
  triggers_replace = [var.generation]
}
