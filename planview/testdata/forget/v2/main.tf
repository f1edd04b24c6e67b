removed {
  from = terraform_data.leaves_state

  lifecycle {
    destroy = false
  }
}

resource "terraform_data" "stays" {
  input = "untouched"
}
