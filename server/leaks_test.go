package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

const leaksTemplate = `
template "leaks" {
  project = "infra"
  command = "infra/leaks"
  survey "secret_list" {
    type      = "list"
    sensitive = true
  }
  survey "secret_map" {
    type      = "map"
    sensitive = true
  }
  survey "rotating" {
    type      = "string"
    sensitive = true
  }
  survey "generation" {
    type    = "string"
    default = "1"
  }
  survey "odd" {
    type      = "string"
    sensitive = true
    default   = "none"
  }
}
rule "no-destroys" {
  templates   = ["leaks"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`

// Canaries of the leak classes the server closes (classes 1-3).
var leakCanaries = []string{
	"list-canary-aaaa1111", "list-canary-bbbb2222", // elements of a sensitive list answer
	"map-canary-cccc3333",     // an element of a sensitive map answer
	"rot-canary-old-11112222", // a sensitive answer the next run rotates
	"rot-canary-new-33334444", // its replacement
	"state-canary-77aa1f3c",   // a value only the state marks sensitive
}

// renderedCanaries are the odd answer as tofu prints it, and the rotated
// answers base64-encoded at offsets 1 and 2 inside a larger value.
func renderedCanaries() []string {
	return []string{
		"odd-cané-\\x1b[31m-\\u00a0-canary", // NFC, ESC and no-break space escaped as tofu does
		"odd-cane\u0301-\x1b[31m-\u00a0-canary",
		base64.StdEncoding.EncodeToString([]byte("xrot-canary-old-11112222tail"))[4:36],
		base64.StdEncoding.EncodeToString([]byte("xyrot-canary-old-11112222tail"))[4:36],
	}
}

// A sensitive list and map answer, an answer rotated in the next run, and
// a value only the prior state marks sensitive, through an ungated apply, a
// dry run and a gated apply: none reaches a log, show --json or any file
// under the data directory.
func TestLeakClassesStayMasked(t *testing.T) {
	h := newHarness(t, leaksTemplate)
	list := `--var=secret_list=["list-canary-aaaa1111","list-canary-bbbb2222"]`
	mapv := `--var=secret_map={"k":"map-canary-cccc3333"}`
	odd := "--var=odd=odd-cane\u0301-\x1b[31m-\u00a0-canary"
	h.mustSSH("alice", "launch", "leaks", list, mapv, odd, "--var", "rotating=rot-canary-old-11112222", "--wait")
	h.mustSSH("alice", "launch", "leaks", "--dry-run", list, mapv, "--var", "rotating=rot-canary-new-33334444", "--var", "generation=2", "--wait")
	out := h.mustSSH("alice", "launch", "leaks", list, mapv, "--var", "rotating=rot-canary-new-33334444", "--var", "generation=2", "--wait")
	if !strings.Contains(out, "awaiting_approval") {
		t.Fatalf("the replacement was not held:\n%s", out)
	}
	r, _ := h.srv.db.GetRun("3")
	h.mustSSH("bob", "approve", "3", "--digest", r.Proposal.Digest)
	h.waitStatus("3", StatusSucceeded)

	var found []string
	for _, id := range []string{"1", "2", "3"} {
		log := h.mustSSH("bob", "log", id)
		if id == "2" && !strings.Contains(log, "***") {
			t.Errorf("run 2's plan masked nothing; did it print the values?\n%s", log)
		}
		found = append(found, leaks("log of run "+id, []byte(log), leakCanaries)...)
		for _, c := range renderedCanaries() {
			if strings.Contains(log, c) {
				found = append(found, fmt.Sprintf("log of run %s holds the rendered form %q", id, c))
			}
		}
		found = append(found, leaks("show --json of run "+id, []byte(h.mustSSH("bob", "show", id, "--json")), leakCanaries)...)
		found = append(found, leaks("the console's view of run "+id, consoleText(t, h, id), leakCanaries)...)
	}
	for _, f := range h.dataFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, leaks(f, b, leakCanaries)...)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// A sensitive answer that cannot be passed to the configuration is refused
// without repeating it, and nothing is queued.
func TestRefusedSecretAnswerNotRepeated(t *testing.T) {
	h := newHarness(t, dataTemplates+secretDataTemplate)
	_, errOut, code := h.ssh("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token=SECRET-CANARY-991\x00")
	if code == 0 || strings.Contains(errOut, "SECRET-CANARY-991") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if runs, _ := h.srv.db.ListRuns(); len(runs) != 0 {
		t.Errorf("%d runs queued", len(runs))
	}
}

// consoleText is everything the console's backend gives a viewer of run
// id: its detail (variables, proposal, plan text, message) and its log.
func consoleText(t *testing.T, h *harness, id string) []byte {
	t.Helper()
	c := consoleAs(h, h.identity("bob"))
	b, err := json.Marshal(consoleRun(t, c, id))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := c.FollowLog(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := range ch {
		b = append(b, chunk.Data...)
	}
	return b
}
