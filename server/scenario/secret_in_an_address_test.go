package scenario

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// keyedTokenConfig is infra/keyedtoken: a resource keyed by a variable the
// configuration declares plain, which the template's survey asks for as
// a secret, so the secret is in the resource's address.
const keyedTokenConfig = `variable "token" {
  type = string
}

resource "terraform_data" "per_token" {
  for_each = toset([var.token])
  input    = "plain"
}
`

const keyedTokenTemplate = `
template "keyedtoken" {
  project = "infra"
  command = "infra/keyedtoken"
  survey "token" {
    type      = "string"
    sensitive = true
  }
}
rule "review-keyedtoken" {
  templates        = ["keyedtoken"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`

// A secret answer in a resource's address (a for_each key) is masked in
// everything a held apply and a drift check show and store: the held
// apply's proposal addresses, the check's findings, their change sets and
// every view of them; no file of the data directory holds it.
func TestASecretAnswerInAnAddressIsMaskedInEveryRecord(t *testing.T) {
	t.Parallel()
	const canary = "address-canary-93ae01c6"
	h := writeHarness(t, "", keyedTokenTemplate)
	testkit.WriteFiles(t, h.project, map[string]string{"infra/keyedtoken/main.tf": keyedTokenConfig})
	h.start()
	answers := `{"token":"` + canary + `"}`
	out, errOut, _ := h.sshStdin("alice", answers, "launch", "keyedtoken", "--answers", "-", "--json")
	held := runIDOf(t, out+errOut)
	h.waitStatus(held, store.StatusAwaitingApproval)
	out, errOut, _ = h.sshStdin("alice", answers, "launch", "keyedtoken", "--check", "--answers", "-", "--json")
	check := runIDOf(t, out+errOut)
	h.waitStatus(check, store.StatusSucceeded)
	outputs := map[string]string{"runs --json": h.mustSSH("bob", "runs", "--json")}
	for _, id := range []string{held, check} {
		for _, args := range [][]string{{}, {"--json"}, {"--changes"}, {"--changes", "--json"}} {
			text := h.mustSSH("bob", append([]string{"show", id}, args...)...)
			if !strings.Contains(text, "terraform_data.per_token") {
				t.Errorf("show %s %v does not name the resource, so it proves nothing:\n%s", id, args, text)
			}
			outputs[fmt.Sprint("show ", id, " ", args)] = text
		}
	}
	for what, text := range outputs {
		for _, f := range testkit.Forms(canary) {
			if strings.Contains(text, f) {
				t.Errorf("%s shows the secret answer (%q):\n%s", what, f, text)
			}
		}
	}
	for _, f := range h.dataFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), canary) {
			t.Errorf("%s holds the secret answer", f)
		}
	}
}
