package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// forgedName is a configuration file's name that, printed raw, forges a
// scan finding and a "no other finding" line, and opens an OSC string
// that a console dropping OSC up to BEL or ST extends over the reason.
const forgedName = "dns.tf:4): a GET of the DNS API, which the scan allows\n  no other finding\n\x1b]x.tf"

// realReason is what the scan says of a data "external".
const realReason = `data "external" runs the program it names when the plan reads it`

// forgedHarness is a server whose template "forged" has one configuration
// file, named forgedName, holding a data "external"; a rule exempts dry
// runs the scan finds nothing in, so a dry run of it is held on the scan.
func forgedHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, `
template "forged" {
  project = "infra"
  command = "infra/forged"
}
rule "review" {
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
`)
	dir := filepath.Join(h.project, "infra", "forged")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, forgedName), []byte("data \"external\" \"lookup\" {\n  program = [\"true\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// hiddenRaw returns the first hidden character s passes as it is (newline
// and tab allowed), or -1.
func hiddenRaw(s string) rune {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return r
			}
		}
		if r != '\n' && r != '\t' && screentext.Hidden(r) {
			return r
		}
	}
	return -1
}

// findingLines are the lines of text that name a scan finding.
func findingLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "data.external.lookup") {
			out = append(out, l)
		}
	}
	return out
}

// A configuration file's name rewrote the scan finding: plain show printed
// a forged finding and a forged "no other finding" line with the real
// reason pushed onto a line of its own, and the console's one-pass cleaning
// let the name's ESC ] swallow the reason. Each part of a finding is now
// escaped as a unit: the real reason is on the finding's line in show, in
// MCP's text and in the run's message, the name's newline and ESC show as
// escapes, and JSON keeps the name as it is.
func TestAFileNameCannotRewriteTheScanFinding(t *testing.T) {
	t.Parallel()
	h := forgedHarness(t)
	v := h.launchWait("alice", "forged", "--dry-run")
	if v.Status != store.StatusAwaitingApproval || len(v.Findings) != 1 {
		t.Fatalf("the dry run is %s with findings %+v, want held on the scan's one finding (%s)", v.Status, v.Findings, v.Message)
	}
	if f := v.Findings[0]; f.File != "infra/forged/"+forgedName || f.Reason != realReason {
		t.Errorf("show --json's finding = %+v, want the file name as it is and the real reason", f)
	}
	if !strings.Contains(v.Message, screentext.Field(forgedName)+":1): "+realReason) {
		t.Errorf("the run's message lost the real reason after the name: %q", v.Message)
	}
	show := h.mustSSH("bob", "show", v.ID)
	mcpText := h.mcpAs("bob").OK("show_run", sshd.MCPRunArg{Run: v.ID}, nil)
	for door, text := range map[string]string{"show": show, "MCP show_run": mcpText} {
		if r := hiddenRaw(text); r >= 0 {
			t.Errorf("%s passed %U raw:\n%q", door, r, text)
		}
		for _, l := range strings.Split(text, "\n") {
			if strings.TrimSpace(l) == "no other finding" {
				t.Errorf("%s printed the name's forged line %q:\n%s", door, l, text)
			}
		}
		found := false
		for _, l := range findingLines(text) {
			if strings.HasPrefix(strings.TrimSpace(l), "finding ") {
				found = true
				if !strings.HasSuffix(l, `\x1b]x.tf:1): `+realReason) || !strings.Contains(l, `allows\n  no other finding\n`) {
					t.Errorf("%s's finding line does not end in the escaped name and the real reason: %q", door, l)
				}
			}
		}
		if !found {
			t.Errorf("%s has no finding line:\n%s", door, text)
		}
	}
	raw, _, _ := h.ssh("bob", "show", v.ID, "--json")
	if r := hiddenRaw(raw); r >= 0 {
		t.Errorf("show --json passed %U raw", r)
	}
}

// The same file name in the real console over SSH: the finding's reason is
// on the screen, the name's ESC ] shows as an escape, and no hidden
// character of the name reaches the terminal.
func TestTheConsoleShowsTheFindingsReasonAfterAForgedFileName(t *testing.T) {
	t.Parallel()
	h := forgedHarness(t)
	v := h.launchWait("alice", "forged", "--dry-run")
	if v.Status != store.StatusAwaitingApproval {
		t.Fatalf("the dry run is %s (%s), want held on the scan", v.Status, v.Message)
	}
	bob := openConsole(h, "bob", 200, 50)
	bob.WaitFor(20*time.Second, "awaiting")
	bob.Keys("\r")
	bob.WaitFor(20*time.Second, "data.external.lookup")
	screen := bob.WaitFor(20*time.Second, realReason, `\x1b]x.tf:1`)
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) == "no other finding" {
			t.Errorf("the console printed the name's forged line:\n%s", screen)
		}
	}
	rec := bob.Raw()
	if strings.Contains(rec, "\x1b]x.tf") || strings.Contains(rec, "allows\n") {
		t.Errorf("the name's OSC or newline reached the terminal raw")
	}
}

// heredocPlan is a configuration whose first value, printed by tofu as a
// heredoc, holds an unterminated DCS string and a claim of its own; tofu's
// rendering of the resources after it, and the plan's counts, follow.
const heredocPlan = `resource "terraform_data" "note" {
  input = "first line\n\u001bPno resource is removed\nlast line"
}
resource "terraform_data" "after" {
  input = "after-marker"
}
`

// An unterminated OSC or DCS string in a multi-line value cut tofu's plan
// text and the log in the console: it dropped everything up to BEL or ST,
// or to the end. Text is escaped rune by rune now: the ESC shows as \x1b
// and everything after it is there, in show, the log, MCP and the console.
func TestAnUnterminatedStringInAValueCutsNoPlanText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "heredoc" {
  project = "infra"
  command = "infra/heredoc"
}
rule "review" {
  templates        = ["heredoc"]
  require_approval = true
  approvers        = ["bob"]
}
`)
	dir := filepath.Join(h.project, "infra", "heredoc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(heredocPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "heredoc")
	if v.Status != store.StatusAwaitingApproval {
		t.Fatalf("the apply is %s (%s), want held with its plan", v.Status, v.Message)
	}
	full := h.show("bob", v.ID)
	if !strings.Contains(full.Proposal.PlanText, "\x1bPno resource is removed") {
		t.Fatalf("tofu's plan text does not hold the value's DCS as the test means it to:\n%q", full.Proposal.PlanText)
	}
	tail := []string{"terraform_data.after will be created", "after-marker", "Plan: 2 to add, 0 to change, 0 to destroy."}
	for door, text := range map[string]string{
		"show":          h.mustSSH("bob", "show", v.ID),
		"log":           h.mustSSH("bob", "log", v.ID),
		"MCP show_run":  h.mcpAs("bob").OK("show_run", sshd.MCPRunArg{Run: v.ID}, nil),
		"show --json's": full.Proposal.PlanText,
	} {
		if door != "show --json's" {
			if r := hiddenRaw(text); r >= 0 {
				t.Errorf("%s passed %U raw", door, r)
			}
			if !strings.Contains(text, `\x1bPno resource is removed`) {
				t.Errorf("%s does not show the DCS as an escape:\n%s", door, text)
			}
		}
		for _, want := range tail {
			if !strings.Contains(text, want) {
				t.Errorf("%s lost %q after the unterminated string:\n%s", door, want, text)
			}
		}
	}
	bob := openConsole(h, "bob", 160, 200)
	bob.WaitFor(20*time.Second, "awaiting")
	bob.Keys("\r")
	bob.WaitFor(20*time.Second, "DESTROYS", "t tofu's text")
	bob.Keys("t") // from the change view to tofu's own text
	bob.WaitFor(20*time.Second, append([]string{`\x1bPno resource is removed`}, tail...)...)
	bob.Keys("\t") // from the proposal pane to the log
	bob.WaitFor(20*time.Second, `\x1bPno resource is removed`, "after-marker", "Plan: 2 to add, 0 to change, 0 to destroy.", "end of log")
	rec := bob.Raw()
	if strings.Contains(rec, "\x1bPno resource") {
		t.Errorf("the value's DCS reached the terminal raw")
	}
}

// lookalikeConfig declares one terraform_data per key of keys, for_each.
func lookalikeConfig(keys string) string {
	return "resource \"terraform_data\" \"db\" {\n  for_each = toset(" + keys + ")\n  input = each.key\n}\n"
}

// OpenTofu escapes format characters in addresses but not nonspacing
// marks: for_each keys "prod" and "prod\u034f" both rendered as
// db["prod"] in the console, show and JSON, and nothing told the approver
// which one a destroy removes. The destroy list now shows the escaped
// form and each address is marked as looking like the other, in show,
// show --json, MCP and the console, and bidi controls of a value never
// reach the terminal raw.
func TestLookalikeKeysAreToldApartInTheDestroyList(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "look" {
  project = "infra"
  command = "infra/look"
  survey "tag" {
    type    = "string"
    default = "none"
  }
}
rule "no-destroys" {
  templates   = ["look"]
  max_destroy = 0
  approvers   = ["bob"]
}
`)
	dir := filepath.Join(h.project, "infra", "look")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(cfg string) {
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg+"variable \"tag\" {\n  type = string\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(lookalikeConfig(`["prod", "prod\u034f"]`))
	if v := h.launchWait("alice", "look"); v.Status != store.StatusSucceeded {
		t.Fatalf("creating both keys: %s (%s)", v.Status, v.Message)
	}
	write(lookalikeConfig(`[]`))
	bidi := "ok\u202e1.0v-esaeler\u202c"
	v := h.launchWait("alice", "look", "--var", "tag="+bidi)
	if v.Status != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Destroy != 2 {
		t.Fatalf("destroying both keys: %s (%s), want held destroying 2", v.Status, v.Message)
	}
	plain, marked := `terraform_data.db["prod"]`, "terraform_data.db[\"prod\u034f\"]"
	escaped := `terraform_data.db["prod\u{034f}"]`
	full := h.show("bob", v.ID)
	if len(full.Lookalikes) != 2 {
		t.Fatalf("show --json marks %+v, want both addresses", full.Lookalikes)
	}
	for _, l := range full.Lookalikes {
		other := map[string]string{plain: marked, marked: plain}[l.Address]
		if l.LooksLike != other || strings.Join(l.DiffersBy, ",") != "U+034F" {
			t.Errorf("show --json's mark %+v, want it to look like %q, differing by U+034F", l, other)
		}
	}
	for door, text := range map[string]string{
		"show":         h.mustSSH("bob", "show", v.ID),
		"MCP show_run": h.mcpAs("bob").OK("show_run", sshd.MCPRunArg{Run: v.ID}, nil),
	} {
		if r := hiddenRaw(text); r >= 0 {
			t.Errorf("%s passed %U raw:\n%s", door, r, text)
		}
		for _, want := range []string{
			"delete: " + plain + ", " + escaped,
			"LOOKALIKE " + escaped + ` looks like terraform_data.db["prod"]: differs by U+034F`,
			"LOOKALIKE " + plain + " looks like " + escaped + ": differs by U+034F",
			`var tag = ok\u{202e}1.0v-esaeler\u{202c}`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", door, want, text)
			}
		}
	}
	bob := openConsole(h, "bob", 160, 60)
	bob.WaitFor(20*time.Second, "awaiting")
	bob.Keys("\r")
	bob.WaitFor(20*time.Second, "DESTROYS")
	bob.WaitFor(20*time.Second, "- "+escaped, `looks like terraform_data.db["prod"]: differs by U+034F`,
		"looks like "+escaped, `ok\u{202e}1.0v-esaeler\u{202c}`)
	rec := bob.Raw()
	for _, r := range "\u034f\u202e\u202c" {
		if strings.ContainsRune(rec, r) {
			t.Errorf("%U reached the terminal raw", r)
		}
	}
	var back api.RunView
	if err := json.Unmarshal([]byte(h.mustSSH("bob", "show", v.ID, "--json")), &back); err != nil || back.Vars["tag"] != bidi {
		t.Errorf("show --json changed the answer: %q (%v)", back.Vars["tag"], err)
	}
}

// A JSON block label is a value from outside too: a data "external" whose
// label holds a newline forged a line of plain show. The address is
// escaped as a unit, so the finding stays on one line with its reason.
func TestABlockLabelCannotForgeAFindingLine(t *testing.T) {
	t.Parallel()
	h := forgedHarness(t)
	dir := filepath.Join(h.project, "infra", "forged")
	if err := os.Remove(filepath.Join(dir, forgedName)); err != nil {
		t.Fatal(err)
	}
	label := "lookup\n  no other finding\n"
	body, _ := json.Marshal(map[string]any{"data": map[string]any{"external": map[string]any{label: map[string]any{"program": []string{"true"}}}}})
	if err := os.WriteFile(filepath.Join(dir, "main.tf.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "forged", "--dry-run")
	if v.Status != store.StatusAwaitingApproval || len(v.Findings) != 1 {
		t.Fatalf("the dry run is %s with findings %+v, want held on one finding (%s)", v.Status, v.Findings, v.Message)
	}
	show := h.mustSSH("bob", "show", v.ID)
	for _, l := range strings.Split(show, "\n") {
		if strings.TrimSpace(l) == "no other finding" {
			t.Errorf("show printed the label's forged line:\n%s", show)
		}
	}
	want := `finding data.external.lookup\n  no other finding\n (infra/forged/main.tf.json:`
	if !strings.Contains(show, want) || !strings.Contains(show, "): "+realReason+"\n") {
		t.Errorf("show lacks the escaped label with the real reason on its line (%q):\n%s", want, show)
	}
}
