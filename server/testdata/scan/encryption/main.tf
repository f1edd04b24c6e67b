terraform {
  encryption {
    key_provider "external" "k" {
      command = ["./key-program"]
    }
  }
}

resource "terraform_data" "x" {
  input = "x"
}
