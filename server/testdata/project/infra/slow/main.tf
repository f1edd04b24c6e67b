# An apply that takes a while, for cancellation: the local-exec provisioner
# runs a command on the machine executing the run.
resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "echo started-slow; sleep 60"
  }
}
