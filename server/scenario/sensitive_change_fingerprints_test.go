package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/notify"
	"github.com/switchtender/switchtender/store"
)

// Two values of a sensitive variable, the state's and the one a held
// apply would write: neither may reach any door, record or message.
const (
	canaryBefore = "fp-canary-before-61d0e4a7"
	canaryAfter  = "fp-canary-after-c39b2f58"
)

// canaryConfig is infra/canary: the sensitive variable into a
// terraform_data input, beside a plain one whose change shows its values.
const canaryConfig = `variable "canary" {
  type      = string
  sensitive = true
}

variable "label" {
  type    = string
  default = "one"
}

resource "terraform_data" "canary" {
  input = var.canary
}

resource "terraform_data" "label" {
  input = var.label
}
`

// canaryTemplates are a held and an ungated template over infra/canary,
// both asking for the canary as a sensitive answer.
const canaryTemplates = `
template "canary" {
  project = "infra"
  command = "infra/canary"
  survey "canary" {
    type      = "string"
    sensitive = true
  }
  survey "label" {
    type    = "string"
    default = "one"
  }
}
template "canary-free" {
  project = "infra"
  command = "infra/canary"
  survey "canary" {
    type      = "string"
    sensitive = true
  }
}
rule "review-canary" {
  templates        = ["canary"]
  require_approval = true
  approvers        = ["bob"]
}
`

// canaryNotifySecret signs the json notify block's deliveries.
const canaryNotifySecret = "canary-hook-secret-2c7e90d1"

// heldCanary starts a harness (tune, when not nil, changes its Options)
// whose notify blocks post to a receiver, applies the canary's first
// value without a hold (run 1) and holds an apply changing it and the
// label (run 2); it returns the harness and the receiver.
func heldCanary(t *testing.T, tune func(h *harness)) (*harness, *testkit.Receiver) {
	t.Helper()
	rc := &testkit.Receiver{}
	ts := httptest.NewServer(rc)
	t.Cleanup(ts.Close)
	hooks := fmt.Sprintf(`
notify "hook" {
  url    = %q
  secret = %q
  format = "json"
}
notify "chat" {
  url    = %q
  format = "slack"
  events = ["awaiting_approval"]
}
`, ts.URL+"/hook", canaryNotifySecret, ts.URL+"/chat")
	h := writeHarness(t, "", canaryTemplates+hooks)
	testkit.WriteFiles(t, h.project, map[string]string{"infra/canary/main.tf": canaryConfig})
	if tune != nil {
		tune(h)
	}
	h.start()
	h.sshStdin("alice", `{"canary":"`+canaryBefore+`"}`, "launch", "canary-free", "--answers", "-")
	h.waitStatus("1", store.StatusSucceeded)
	h.sshStdin("alice", `{"canary":"`+canaryAfter+`","label":"two"}`, "launch", "canary", "--answers", "-")
	h.waitStatus("2", store.StatusAwaitingApproval)
	return h, rc
}

// mustHoldNoCanary fails the test when text holds either canary in any
// common encoding.
func mustHoldNoCanary(t *testing.T, what, text string) {
	t.Helper()
	for _, c := range []string{canaryBefore, canaryAfter} {
		for _, f := range testkit.Forms(c) {
			if strings.Contains(text, f) {
				t.Errorf("%s holds a sensitive value (%q)", what, f)
			}
		}
	}
}

// mustStoreNoCanary fails the test when any file of the data directory,
// the store's whole bbolt file included, holds either canary.
func mustStoreNoCanary(t *testing.T, h *harness, when string) {
	t.Helper()
	files := h.dataFiles()
	if !strings.Contains(strings.Join(files, "\n"), "switchtender.db") {
		t.Fatalf("the store's file is not among the data directory's files %v, so this proves nothing", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mustHoldNoCanary(t, fmt.Sprintf("%s %s", f, when), string(b))
	}
}

// The held apply changes a sensitive value: its change set says the value
// changed, with two different fingerprints and no value; every door shows
// that and nothing of either value (show, show --json, show --changes in
// text and JSON, log, runs, MCP's show_run and run resource, the console
// over a terminal and its backend, the notifications), and no file of the
// data directory holds one, held or applied.
func TestASensitiveChangeShowsOnlyItsFingerprintsInEveryDoor(t *testing.T) {
	t.Parallel()
	h, rc := heldCanary(t, nil)
	held := h.show("bob", "2")
	if held.Proposal == nil || held.Changes == nil {
		t.Fatalf("the held apply has no proposal or change set: %+v", held.Proposal)
	}
	var cs planview.ChangeSet
	alone := h.mustSSH("bob", "show", "2", "--changes", "--json")
	if err := json.Unmarshal([]byte(alone), &cs); err != nil {
		t.Fatal(err)
	}
	text := h.mustSSH("bob", "show", "2", "--changes")
	if !strings.Contains(firstLine(text), held.Proposal.Digest) || !strings.Contains(text, "terraform_data.canary") {
		t.Errorf("show --changes names neither the digest nor the changed resource:\n%s", text)
	}
	checkFingerprints(t, &cs, text)
	checkPlainValues(t, &cs)

	outputs := map[string]string{
		"show": h.mustSSH("bob", "show", "2"), "show --json": h.mustSSH("bob", "show", "2", "--json"),
		"show --changes": text, "show --changes --json": alone,
		"log": h.mustSSH("bob", "log", "2"), "runs --json": h.mustSSH("bob", "runs", "--json"),
	}
	for what, out := range doorOutputs(t, h, "2") {
		outputs[what] = out
	}
	for what, out := range outputs {
		mustHoldNoCanary(t, what, out)
	}
	checkNotifiedChanges(t, rc, held.Proposal.Digest)
	mustStoreNoCanary(t, h, "while the apply is held")

	h.mustSSH("bob", "approve", "2", "--digest", held.Proposal.Digest)
	h.waitStatus("2", store.StatusSucceeded)
	after := h.mustSSH("bob", "show", "2", "--changes")
	if _, body, _ := strings.Cut(text, "\n"); !strings.HasSuffix(after, "\n"+body) || !strings.Contains(firstLine(after), "succeeded") {
		t.Errorf("the applied run's change set is not the one its approver saw:\n%s\n---\n%s", text, after)
	}
	got := rc.WaitFor(t, "the applied event", func(g []testkit.Received) bool {
		return len(g) > 0 && g[len(g)-1].Event == "applied"
	})
	for _, g := range got {
		mustHoldNoCanary(t, "notification "+g.Event+" to "+g.Path, string(g.Body))
	}
	mustStoreNoCanary(t, h, "after the apply")
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// checkFingerprints checks the canary's change in cs: an update of
// terraform_data.canary whose input is sensitive, changed, with two
// different fingerprints and no value, both fingerprints in text (what
// `show --changes` printed).
func checkFingerprints(t *testing.T, cs *planview.ChangeSet, text string) {
	t.Helper()
	input := changedAttribute(cs, "terraform_data.canary", "input")
	if input == nil {
		t.Errorf("the change set has no changed input of terraform_data.canary:\n%s", text)
		return
	}
	a := *input
	if !a.Sensitive || !a.Changed || a.Before != "" || a.After != "" {
		t.Errorf("the canary's input = %+v, want sensitive, changed, no values", a)
	}
	if a.BeforeFingerprint == "" || a.AfterFingerprint == "" || a.BeforeFingerprint == a.AfterFingerprint {
		t.Errorf("the canary's fingerprints %q and %q must be two different ones", a.BeforeFingerprint, a.AfterFingerprint)
	}
	for _, fp := range []string{a.BeforeFingerprint, a.AfterFingerprint} {
		if p := fp[:min(len(fp), 12)]; p == "" || !strings.Contains(text, p) {
			t.Errorf("show --changes does not show fingerprint %q:\n%s", fp, text)
		}
	}
}

// checkPlainValues checks that cs shows the plain label's values.
func checkPlainValues(t *testing.T, cs *planview.ChangeSet) {
	t.Helper()
	label := changedAttribute(cs, "terraform_data.label", "input")
	if label == nil || label.Sensitive || !strings.Contains(label.Before, "one") || !strings.Contains(label.After, "two") {
		t.Errorf("the plain label's change = %+v, want its values one and two", label)
	}
}

// changedAttribute is the changed attribute path of the resource at
// address in cs, or nil.
func changedAttribute(cs *planview.ChangeSet, address, path string) *planview.Attribute {
	for _, r := range cs.Resources {
		if r.Address != address {
			continue
		}
		for i := range r.Attributes {
			if r.Attributes[i].Path == path {
				return &r.Attributes[i]
			}
		}
	}
	return nil
}

// doorOutputs is what the doors other than SSH commands show of run id to
// bob: MCP's show_run (text and structured result, which must carry the
// change set show --json does) and run resource, the console's backend
// detail and what the console over a terminal drew of the run.
func doorOutputs(t *testing.T, h *harness, id string) map[string]string {
	t.Helper()
	out := map[string]string{}
	c := h.mcpAs("bob")
	res := c.Call("show_run", map[string]any{"run": id})
	structured, _ := json.Marshal(res.StructuredContent)
	out["MCP show_run"], out["MCP show_run structured"] = testkit.ResultText(res), string(structured)
	var viaMCP struct{ Changes json.RawMessage }
	_ = json.Unmarshal(structured, &viaMCP)
	var viaSSH struct{ Changes json.RawMessage }
	_ = json.Unmarshal([]byte(h.mustSSH("bob", "show", id, "--json")), &viaSSH)
	if len(viaMCP.Changes) == 0 || !sameJSON(viaMCP.Changes, viaSSH.Changes) {
		t.Errorf("show_run's changes differ from show --json's:\n%s\n%s", viaMCP.Changes, viaSSH.Changes)
	}
	rr, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "run://" + id})
	if err != nil {
		t.Fatalf("run://%s: %v", id, err)
	}
	for _, content := range rr.Contents {
		out["MCP run resource"] += content.Text
	}
	d := consoleRun(t, consoleAs(h, h.identity("bob")), id)
	if d.Proposal == nil || d.Proposal.Changes == nil {
		t.Errorf("the console's proposal of run %s has no change set", id)
	}
	detail, _ := json.Marshal(d)
	out["console backend"] = string(detail)
	out["console screen"] = consoleScreenOf(h, id)
	return out
}

// sameJSON reports whether a and b hold equal JSON values.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// consoleScreenOf opens the console over a terminal as bob, opens run id
// (the newest, under the cursor) and returns everything drawn.
func consoleScreenOf(h *harness, id string) string {
	h.t.Helper()
	bob := openConsole(h, "bob", 120, 40)
	defer bob.Close()
	bob.WaitFor(30*time.Second, "signed in as bob (approve)", "▶ YOU")
	bob.Keys("\r")
	bob.WaitFor(30*time.Second, "Run "+id+" · canary · apply", "digest:")
	return bob.Raw()
}

// checkNotifiedChanges checks the awaiting_approval deliveries: the json
// payload's changes_summary, within its limit, naming the command for the
// rest, and the Slack text carrying it; neither holds a canary.
func checkNotifiedChanges(t *testing.T, rc *testkit.Receiver, digest string) {
	t.Helper()
	got := rc.WaitFor(t, "awaiting_approval on both blocks", func(g []testkit.Received) bool {
		n := 0
		for _, r := range g {
			if r.Event == "awaiting_approval" {
				n++
			}
		}
		return n >= 2
	})
	for _, g := range got {
		mustHoldNoCanary(t, "notification "+g.Event+" to "+g.Path, string(g.Body))
		if g.Event != "awaiting_approval" {
			continue
		}
		if g.Path == "/chat" {
			var slack struct{ Text string }
			if err := json.Unmarshal(g.Body, &slack); err != nil || !strings.Contains(slack.Text, "show 2 --changes") {
				t.Errorf("the Slack message does not carry the change set's summary: %s", g.Body)
			}
			continue
		}
		var p notify.Payload
		if err := json.Unmarshal(g.Body, &p); err != nil || p.Digest != digest {
			t.Fatalf("payload %s: %v", g.Body, err)
		}
		if p.ChangesSummary == "" || len(p.ChangesSummary) > notify.ChangesSummaryLimit || !strings.Contains(p.ChangesSummary, "show 2 --changes") {
			t.Errorf("changes_summary (%d bytes, at most %d) = %q", len(p.ChangesSummary), notify.ChangesSummaryLimit, p.ChangesSummary)
		}
	}
}
