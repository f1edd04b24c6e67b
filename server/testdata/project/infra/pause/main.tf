# An apply that prints, pauses, and prints again.
resource "terraform_data" "pause" {
  provisioner "local-exec" {
    command = "echo before-pause; sleep 3; echo after-pause"
  }
}
