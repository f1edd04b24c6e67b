# An apply whose apply phase takes a while: the local-exec provisioner of
# the resource the approved plan creates runs for 30 seconds, long enough to
# kill the server while tofu applies.
resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "echo started-slow; sleep 30"
  }
}
