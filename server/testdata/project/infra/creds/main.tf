# Prints the credentials a run receives, so the tests can see that they
# arrive and that the log masks them.
variable "note" {
  type    = string
  default = "hello"
}

resource "terraform_data" "show" {
  triggers_replace = [var.note]
  provisioner "local-exec" {
    command = "echo cloud=$CLOUD_KEY token=$SWITCHTENDER_TOKEN vault=$VAULT_TOKEN checkpoint=$CHECKPOINT_DISABLE args=$TF_CLI_ARGS"
  }
}
