output "zones" {
  value = ["a", "b"]
}
