data "http" "p" {
  url          = "https://example.com/hook"
  method       = "POST"
  request_body = "{}"
}
