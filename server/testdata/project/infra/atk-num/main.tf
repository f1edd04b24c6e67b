# Attack: a sensitive number answer (a card number) that a validation rule
# rejects. OpenTofu's diagnostic prints the offending value as
# "var.pin is 4.111111111e+16" (compactValueStr: big.Float Text('g', 10)).
variable "pin" {
  type = number
  validation {
    condition     = var.pin < 100
    error_message = "The pin is out of range."
  }
}

resource "terraform_data" "pin" {
  input = var.pin
}
