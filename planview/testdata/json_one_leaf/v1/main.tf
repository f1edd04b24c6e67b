# A document of 1,000 lines when pretty-printed: 200 rules of 5 lines.
locals {
  document = {
    service = "api"
    rules = [for i in range(200) : {
      id    = i
      port  = 1000 + i
      allow = true
    }]
  }
}

resource "terraform_data" "policy" {
  input = jsonencode(local.document)
}
