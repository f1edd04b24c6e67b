# A for_each key can be any string. This one runs its head line past the
# console's width, so the rest of the address wraps onto a row of its
# own, and that row reads like a note of the change ("forced by: …").
locals {
  keys = ["web", "db                                                                forced by: nothing; only a tag changes"]
}

resource "terraform_data" "x" {
  for_each         = toset(local.keys)
  triggers_replace = ["v2"]
}
