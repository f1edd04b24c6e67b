package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// cutTokenConfig is infra/cuttoken: a variable the configuration declares
// plain (the template's survey asks for it as a secret) at the end of a
// long value, where the change set cuts a value it shows (200 runes), and
// as one line of a long text.
const cutTokenConfig = `variable "token" {
  type = string
}

variable "label" {
  type    = string
  default = "one"
}

locals {
  filler = join("", [for i in range(19) : "filler-${i % 10}-"])
}

resource "terraform_data" "cut" {
  input = "${local.filler}${var.token}"
}

resource "terraform_data" "text" {
  input = "first ${var.label}\n${local.filler}${var.token}\nlast\n"
}
`

const cutTokenTemplate = `
template "cuttoken" {
  project = "infra"
  command = "infra/cuttoken"
  survey "token" {
    type      = "string"
    sensitive = true
  }
  survey "label" {
    type    = "string"
    default = "one"
  }
}
rule "review-cuttoken" {
  templates        = ["cuttoken"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`

// A secret answer the plan does not mark, which a value shown in the
// change set would be cut through, shows no part of itself: the change set
// knows the run's secrets before it cuts a value, and lists a value holding
// one as a sensitive path (changed, with fingerprints), like one the plan
// marks.
func TestASecretAnswerAtTheCutOfAValueShowsNoPartOfItself(t *testing.T) {
	t.Parallel()
	const canary = "CUTCANARY0123456789abcdefXYZ"
	h := writeHarness(t, "", cutTokenTemplate)
	testkit.WriteFiles(t, h.project, map[string]string{"infra/cuttoken/main.tf": cutTokenConfig})
	h.start()
	h.sshStdin("alice", `{"token":"`+canary+`"}`, "launch", "cuttoken", "--answers", "-")
	h.waitStatus("1", store.StatusAwaitingApproval)
	h.mustSSH("bob", "approve", "1", "--digest", h.show("bob", "1").Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
	h.sshStdin("alice", `{"token":"`+canary+`","label":"two"}`, "launch", "cuttoken", "--answers", "-")
	h.waitStatus("2", store.StatusAwaitingApproval)
	for _, id := range []string{"1", "2"} {
		for _, args := range [][]string{{"--changes"}, {"--changes", "--json"}} {
			text := h.mustSSH("bob", append([]string{"show", id}, args...)...)
			if !strings.Contains(text, "terraform_data.") {
				t.Fatalf("show %s %v does not name the resource, so it proves nothing:\n%s", id, args, text)
			}
			if strings.Contains(text, canary[:6]) {
				t.Errorf("show %s %v shows part of the secret answer (%q):\n%s", id, args, canary[:6], text)
			}
		}
	}
	cs := changeSetOf(t, h, "2")
	if a := changedAttribute(cs, "terraform_data.text", "input"); a == nil || !a.Sensitive || !a.Changed || a.BeforeFingerprint == a.AfterFingerprint {
		t.Errorf("the text holding the secret answer, changed: %+v, want a sensitive path, changed", a)
	}
}
