data "http" "g" {
  url = "https://example.com"
}

data "http" "h" {
  url    = "https://example.com"
  method = "HEAD"
}
