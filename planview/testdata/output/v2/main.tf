resource "terraform_data" "unchanged" {
  input = "same"
}

output "endpoint" {
  value = "https://new.example.com"
}

output "added" {
  value = { region = "eu-west-1", zones = 3 }
}

output "ports" {
  value = [80, 443, 8443]
}

output "computed" {
  value = terraform_data.unchanged.output
}
