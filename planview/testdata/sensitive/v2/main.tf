variable "rotated" {
  type      = string
  sensitive = true
  default   = "canary-rotated-after-5c2a"
}

variable "kept" {
  type      = string
  sensitive = true
  default   = "canary-kept-3b9e"
}

resource "terraform_data" "credentials" {
  input = {
    rotated = var.rotated
    kept    = var.kept
    owner   = "team-b"
  }
}

resource "terraform_data" "token" {
  input = var.rotated
}

output "token" {
  value     = var.rotated
  sensitive = true
}
