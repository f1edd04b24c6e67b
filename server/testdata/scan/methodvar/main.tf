variable "m" {
  default = "GET"
}

data "http" "v" {
  url    = "https://example.com"
  method = var.m
}
