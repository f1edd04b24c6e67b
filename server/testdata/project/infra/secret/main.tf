# Secrets in every form a run meets them, for the tests that look for them
# where they must not be: a variable the configuration declares sensitive, a
# plain variable the template's survey marks sensitive, a value derived from
# the secret that only the plan knows is sensitive, sensitive outputs, and a
# local-exec provisioner that prints the credentials it receives.
variable "db_password" {
  type      = string
  sensitive = true
}

# Declared plain here; the template's survey marks it sensitive.
variable "api_note" {
  type    = string
  default = "none"
}

variable "generation" {
  type    = string
  default = "1"
}

locals {
  # Known only to the plan: a digest of the password, marked sensitive.
  derived = sensitive("derived-${sha256(var.db_password)}")
}

resource "terraform_data" "db" {
  input = var.db_password
}

resource "terraform_data" "derived" {
  triggers_replace = [local.derived, var.generation]
  input            = local.derived
}

# Plain in the configuration, so the plan text shows it unless the masker
# knows the survey marked it sensitive.
resource "terraform_data" "note" {
  input = var.api_note
}

resource "terraform_data" "echo" {
  triggers_replace = [var.generation]
  provisioner "local-exec" {
    # nonsensitive() lets tofu print what it would otherwise suppress, the
    # way a careless provisioner leaks a secret: only the masker stands
    # between these values and the log.
    command = "echo cloud=$CLOUD_KEY vault=$VAULT_TOKEN; echo cloud64=$(printf %s \"$CLOUD_KEY\" | base64); echo db=$DB_PASSWORD db64=$DB64 dbjson=$DBJSON dburl=$DBURL; echo derived=$DERIVED note=$NOTE"
    environment = {
      DB_PASSWORD = nonsensitive(var.db_password)
      DB64        = base64encode(nonsensitive(var.db_password))
      DBJSON      = jsonencode(nonsensitive(var.db_password))
      DBURL       = urlencode(nonsensitive(var.db_password))
      DERIVED     = nonsensitive(local.derived)
      NOTE        = var.api_note
    }
  }
}

output "db" {
  value     = terraform_data.db.output
  sensitive = true
}

output "derived" {
  value     = terraform_data.derived.output
  sensitive = true
}
