# Attack: a provisioner prints secret answers (plain variables whose survey
# fields are sensitive) in ways OpenTofu's own output handling reshapes:
# its line reader flushes a partial line after 100 ms without a byte, its
# UI trims trailing white space from each line and splits lines at "\r".
variable "slow" {
  type    = string
  default = "none"
}

variable "trail" {
  type    = string
  default = "none"
}

variable "cr" {
  type    = string
  default = "none"
}

resource "terraform_data" "slow" {
  provisioner "local-exec" {
    # The whole secret, unchanged, written by a slow writer.
    command = "printf 'slow=%s\\n' \"$SLOW\" | { dd bs=1 count=16 2>/dev/null; sleep 0.6; cat; }"
    environment = {
      SLOW = var.slow
    }
  }
}

resource "terraform_data" "trail" {
  provisioner "local-exec" {
    command = "printf 'trail=%s\\n' \"$TRAIL\""
    environment = {
      TRAIL = var.trail
    }
  }
}

resource "terraform_data" "cr" {
  provisioner "local-exec" {
    command = "printf 'cr=%s\\n' \"$CR\""
    environment = {
      CR = var.cr
    }
  }
}
