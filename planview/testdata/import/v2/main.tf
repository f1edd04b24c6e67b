resource "terraform_data" "already_managed" {
  input = "here before"
}

import {
  to = terraform_data.adopted
  id = "existing-object-id"
}

resource "terraform_data" "adopted" {
}
