resource "terraform_data" "server" {
  input            = { name = "web", size = 2 }
  triggers_replace = ["image-v2", "zone-a"]
}
