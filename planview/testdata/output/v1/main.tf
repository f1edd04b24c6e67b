resource "terraform_data" "unchanged" {
  input = "same"
}

output "endpoint" {
  value = "https://old.example.com"
}

output "removed" {
  value = "goes away"
}

output "ports" {
  value = [80, 443]
}
