package server

// Hostile tests of the run lifecycle: each puts an attack to a run and asserts
// the promise the attack would break.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/tui"
)

// A held apply whose state moves on in a way only the apply's own check
// sees (another backend, read with state pull just before the apply) ends
// `stale`; `show --json` must then say "stale": true, not false beside
// status "stale".
func TestAnApplyStaleAtApplyTimeShowsStale(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.srv.db.GetRun("1")
	h.srv.runner = gatedFake(map[string]func(context.Context, exec.Invocation) ([]byte, exec.Result, error){
		"state": func(context.Context, exec.Invocation) ([]byte, exec.Result, error) {
			return []byte(`{"lineage":"moved-on","serial":9}`), exec.Result{}, nil
		},
	})
	h.mustSSH("alice", "approve", "1", "--digest", r.Proposal.Digest)
	h.waitStatus("1", StatusStale, StatusSucceeded, StatusFailed)
	r, _ = h.srv.db.GetRun("1")
	if r.Status != StatusStale {
		t.Fatalf("run 1 is %s: %s", r.Status, r.Message)
	}
	raw := h.showRaw("alice", "1")
	if raw["status"] != "stale" || raw["stale"] != true {
		t.Errorf("show --json of a run whose status is stale: status=%v stale=%v stale_reason=%v", raw["status"], raw["stale"], raw["stale_reason"])
	}
}

// A template's survey field that was sensitive when a run was launched and is
// no longer: rerun keeps its secret answer sealed (README: secret answers are
// reused from the sealed store, never shown). Once, it moved it into the new
// run's plain answers and vars, where show printed it.
func TestARerunKeepsSealedAnswersSealed(t *testing.T) {
	const canary = "Rerun-Secret-4471"
	h := newHarness(t, dataTemplates+secretDataTemplate)
	h.mustSSH("alice", "launch", "data-free", "--wait")
	h.mustSSH("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary, "--wait")
	h.mustSSH("bob", "reject", "2", "--reason", "later")
	tmpl := h.srv.config().Templates["data-secret"]
	f := *tmpl.Survey[1]
	f.Sensitive = false
	tmpl.Survey[1] = &f
	out, errOut, code := h.ssh("alice", "rerun", "2", "--json")
	if code != 0 {
		t.Logf("rerun refused (acceptable): %s", errOut)
		return
	}
	if strings.Contains(out, canary) {
		t.Errorf("rerun prints the secret answer it reused from the sealed store")
	}
	if s := h.mustSSH("bob", "show", "3"); strings.Contains(s, canary) {
		t.Errorf("show of the rerun prints the secret answer of run 2:\n%s", s)
	}
}

// --answers - with one name twice in the JSON object: it is refused (README:
// a flag that takes one value refuses a second; a name given both ways is
// refused). Once, the second silently won.
func TestAnswersJSONWithANameTwiceIsRefused(t *testing.T) {
	h := newHarness(t, dataTemplates)
	var out, errOut bytes.Buffer
	code := h.srv.command(context.Background(), h.identity("alice"),
		[]string{"launch", "data", "--dry-run", "--answers", "-"},
		strings.NewReader(`{"instances":"1","instances":"5"}`), &out, &errOut)
	if code == 0 {
		r, _ := h.srv.db.GetRun("1")
		t.Errorf("an answers object naming instances twice was accepted (instances=%s)", r.Answers["instances"])
	}
}

// twoStep is a working directory whose apply creates terraform_data.a and
// then hangs in terraform_data.b's provisioner, so a stop interrupts an
// apply that already changed the state.
const twoStepTF = `
resource "terraform_data" "a" {
  input = "a"
}
resource "terraform_data" "b" {
  depends_on = [terraform_data.a]
  provisioner "local-exec" {
    command = "echo b-started; sleep 30"
  }
}
`

const twoStepTemplates = `
template "two-gated" {
  project = "infra"
  command = "infra/twostep"
}
template "two-free" {
  project = "infra"
  command = "infra/twostep"
}
rule "review-two" {
  templates        = ["two-gated"]
  require_approval = true
}
`

// A held proposal in a working directory where another apply was interrupted
// (the server stopped) after it changed the state: README "Stale before
// anyone approves": whenever a run ends in a working directory where another
// proposal is held, the held plan whose basis no longer matches becomes stale
// at once. Once, after the restart the held plan was still shown approvable
// ("stale": false, waiting for you) and was caught only at the apply.
func TestAnInterruptedApplyMakesAHeldPlanStale(t *testing.T) {
	h := newHarness(t, twoStepTemplates)
	dir := filepath.Join(h.project, "infra/twostep")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(twoStepTF), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustSSH("carol", "launch", "two-gated", "--wait")
	held, _ := h.srv.db.GetRun("1")
	if held.Status != StatusAwaitingApproval {
		t.Fatalf("run 1 is %s: %s", held.Status, held.Message)
	}
	h.mustSSH("alice", "launch", "two-free")
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(h.mustSSH("alice", "log", "2"), "b-started") {
		if time.Now().After(deadline) {
			t.Fatalf("run 2 never reached b:\n%s", h.mustSSH("alice", "log", "2"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.restart()
	r2, _ := h.srv.db.GetRun("2")
	st, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil || !strings.Contains(string(st), `"a"`) {
		t.Fatalf("the interrupted apply left no state with terraform_data.a (run 2: %s %s): %v\n%s", r2.Status, r2.Message, err, st)
	}
	t.Logf("run 2: %s; state now holds terraform_data.a", r2.Status)
	v := h.show("bob", "1")
	if !v.Stale {
		t.Errorf("after an interrupted apply changed the state, held run 1 is shown stale=%v status=%s waiting_for_you=%v", v.Stale, v.Status, v.WaitingForYou)
	}
	out, errOut, code := h.ssh("bob", "approve", "1", "--digest", held.Proposal.Digest)
	h.waitStatus("1", StatusStale, StatusSucceeded, StatusFailed)
	r1, _ := h.srv.db.GetRun("1")
	t.Logf("bob approve: exit %d %s%s; run 1 then ends %s: %s", code, out, errOut, r1.Status, r1.Message)
}

// A rule whose only approver is the requester (allow_self_approval off): show
// --json and the console say that nobody may release the hold, since alice is
// refused and nobody else may. Once, the hold "waits_for" alice and the
// console listed her as its approver, a deadlock reported as if someone could
// act.
func TestAHoldOnlyTheRequesterCouldReleaseSaysSo(t *testing.T) {
	h := newHarness(t, dataTemplates+`
rule "alice-only" {
  templates        = ["data"]
  require_approval = true
  approvers        = ["alice"]
}
`)
	h.mustSSH("alice", "launch", "data", "--wait")
	r, _ := h.srv.db.GetRun("1")
	v := h.show("alice", "1")
	_, errOut, code := h.ssh("alice", "approve", "1", "--digest", r.Proposal.Digest)
	anyone := false
	for _, who := range []string{"alice", "bob", "dave"} {
		anyone = anyone || h.srv.waitingFor(r, h.identity(who))
	}
	if code != 0 && !anyone && len(v.Holds) == 1 && v.Holds[0].WaitsFor == "alice" {
		t.Errorf("run 1 says it waits for alice (%q), alice is refused (%s) and nobody can release it: a deadlock shown as a wait", v.Holds[0].WaitsFor, strings.TrimSpace(errOut))
	}
}

// help, help CMD, CMD --help and CMD -h for every command exit 0 and agree;
// an unknown topic exits 2; every single-value flag refuses a second
// value; trailing arguments are refused.
func TestHelpAndFlagsAgreeForEveryCommand(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	if out := h.mustSSH("bob", "help"); !strings.Contains(out, "awaiting_approval") || !strings.Contains(out, "rerun RUN") {
		t.Errorf("help lacks statuses or rerun:\n%s", out)
	}
	for _, c := range commandTable {
		want := h.mustSSH("bob", "help", c.name)
		for _, form := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {c.name, "-help"}} {
			if got := h.mustSSH("bob", form...); got != want {
				t.Errorf("%v differs from help %s", form, c.name)
			}
		}
	}
	if _, _, code := h.ssh("bob", "help", "nope"); code != 2 {
		t.Errorf("help nope: exit %d", code)
	}
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.srv.db.GetRun("1")
	d := r.Proposal.Digest
	for _, args := range [][]string{
		{"approve", "1", "--digest", d, "--digest", d},
		{"approve", "1", "--digest", d, "--json", "--json"},
		{"reject", "1", "--reason", "a", "--reason", "b"},
		{"launch", "data", "--dry-run", "--dry-run"},
		{"launch", "data", "--wait", "--wait"},
		{"launch", "data", "--answers", "-", "--answers", "-"},
		{"launch", "data", "--var", "instances=1", "--var", "instances=1"},
		{"rerun", "1", "--wait", "--wait"},
		{"show", "1", "2"},
		{"cancel", "1", "1"},
		{"runs", "1"},
		{"templates", "x"},
		{"log", "1", "--follow", "--follow"},
		{"approve", "1", "2", "--digest", d},
		{"reject", "1", "extra", "--reason", "x"},
		{"help", "show", "log"},
	} {
		_, errOut, code := h.ssh("alice", args...)
		if code != 2 {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	if r2, _ := h.srv.db.GetRun("1"); r2.Status != r.Status || len(r2.Approvals) != 0 {
		t.Errorf("a refused command changed run 1: %s %+v", r2.Status, r2.Approvals)
	}
}

// planLine is tofu's own "Plan: …" summary in a plan text, without the
// trailing dot.
func planLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "Plan: "); ok {
			return strings.TrimSuffix(s, ".")
		}
	}
	return ""
}

// Counts in tofu's words and arithmetic: for replacements, destroys and a
// mix, the counts show and the console give start with what tofu itself
// printed for the same plan.
func TestCountsMatchTofu(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.srv.db.GetRun("1")
	h.mustSSH("alice", "approve", "1", "--digest", r.Proposal.Digest)
	h.waitStatus("1", StatusSucceeded)
	id := 1
	for _, vars := range [][]string{
		{"--var", "generation=2"},                         // replace 3
		{"--var", "generation=2", "--var", "instances=2"}, // replace 2, destroy 1
		{"--var", "instances=5"},                          // add 2
	} {
		id++
		sid := strconv.Itoa(id)
		h.mustSSH("carol", append([]string{"launch", "data", "--wait"}, vars...)...)
		v := h.show("alice", sid)
		tofu := planLine(v.Proposal.PlanText)
		if tofu == "" || !strings.HasPrefix(v.Counts, tofu) {
			t.Errorf("%v: show says %q, tofu said %q", vars, v.Counts, tofu)
		}
		d := consoleRun(t, consoleAs(h, h.identity("alice")), sid)
		if p := d.Proposal; p == nil || p.Add+p.Replace != v.Proposal.Add+v.Proposal.Replace || p.Destroy != v.Proposal.Destroy {
			t.Errorf("%v: console proposal %+v", vars, p)
		}
		h.mustSSH("alice", "cancel", sid)
	}
}

// The rerun refusal itself: a secret answer whose field is no longer
// sensitive and now wants a number is refused without the sealed secret
// quoted back ("a refusal never repeats an answer"; secret answers are "never
// shown"). Once, stderr quoted it back.
func TestARerunRefusalNeverQuotesASealedSecret(t *testing.T) {
	const canary = "Rerun-Secret-9913"
	h := newHarness(t, dataTemplates+secretDataTemplate)
	h.mustSSH("alice", "launch", "data-free", "--wait")
	h.mustSSH("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary, "--wait")
	h.mustSSH("bob", "reject", "2", "--reason", "later")
	tmpl := h.srv.config().Templates["data-secret"]
	f := *tmpl.Survey[1]
	f.Sensitive, f.Type = false, "number"
	tmpl.Survey[1] = &f
	_, errOut, code := h.ssh("alice", "rerun", "2")
	if code != exitRefused {
		t.Fatalf("rerun: exit %d %q", code, errOut)
	}
	if strings.Contains(errOut, canary) {
		t.Errorf("the rerun refusal quotes run 2's sealed secret answer: %s", strings.TrimSpace(errOut))
	}
	_, err := consoleAs(h, h.identity("alice")).Rerun(context.Background(), "2")
	if err != nil && strings.Contains(err.Error(), canary) {
		t.Errorf("the console's rerun refusal quotes the sealed secret: %v", err)
	}
}

// Rerun of a rerun of a stale run: same answers, secret included, rerun_of
// the immediate run; rerun of a held, queued or running run refused;
// rerun output never holds the secret.
func TestARerunOfARerunKeepsItsAnswers(t *testing.T) {
	const canary = "Rerun-Secret-5520"
	h := newHarness(t, dataTemplates+secretDataTemplate)
	h.mustSSH("alice", "launch", "data-free", "--wait")
	h.mustSSH("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary, "--wait")
	h.mustSSH("alice", "launch", "data-free", "--var", "instances=4", "--wait") // 2 goes stale
	h.waitStatus("2", StatusStale)
	out := h.mustSSH("carol", "rerun", "2", "--wait", "--json") // 4, held
	if strings.Contains(out, canary) {
		t.Errorf("rerun --json prints the secret")
	}
	if _, errOut, code := h.ssh("carol", "rerun", "4"); code != 1 {
		t.Errorf("rerun of a held run: exit %d %q", code, errOut)
	}
	h.mustSSH("bob", "reject", "4")
	out = h.mustSSH("carol", "rerun", "4", "--wait")
	if strings.Contains(out, canary) {
		t.Errorf("rerun --wait prints the secret")
	}
	r5, _ := h.srv.db.GetRun("5")
	secret, err := openSealedMap(h.srv.key, "5", r5.SealedAnswers)
	if r5.RerunOf != "4" || err != nil || secret["token"] != canary || r5.Answers["instances"] != "1" {
		t.Errorf("rerun of a rerun: rerun_of %q answers %v secret ok=%v %v", r5.RerunOf, r5.Answers, secret["token"] == canary, err)
	}
	if r5.Status != StatusAwaitingApproval || r5.Proposal.Destroy != 3 {
		t.Errorf("run 5: %s %+v", r5.Status, r5.Proposal)
	}
}

const manyFields = `
template "many" {
  project = "infra"
  command = "infra/data"
  survey "name" {
    type = "string"
  }
  survey "size" {
    type    = "choice"
    choices = ["small", "large"]
  }
  survey "on" {
    type = "bool"
  }
  survey "pin" {
    type      = "number"
    sensitive = true
  }
  survey "tags" {
    type = "map"
  }
  survey "opt" {
    type    = "string"
    default = "x"
  }
}
`

// The SSH launch and the console's CheckLaunch agree on every answer set,
// field by field, and neither quotes a sensitive answer.
func TestSSHAndTheConsoleValidateLaunchesAlike(t *testing.T) {
	h := newHarness(t, manyFields)
	good := map[string]string{"name": "n", "size": "small", "on": "true", "pin": "1234", "tags": `{"a":"b"}`}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		if v == "<drop>" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []map[string]string{
		good,
		with("name", ""), with("name", "<drop>"), with("size", ""), with("size", "<drop>"), with("size", "Small"),
		with("on", ""), with("on", "<drop>"), with("on", "yes"), with("pin", "SecretPin-77"), with("pin", ""),
		with("tags", ""), with("tags", "[]"), with("opt", ""), with("nope", "1"), with("pin", " 12 "),
	}
	alice := consoleAs(h, h.identity("alice"))
	for _, answers := range cases {
		args := []string{"launch", "many", "--dry-run"}
		for k, v := range answers {
			args = append(args, "--var", k+"="+v)
		}
		_, errOut, code := h.ssh("alice", args...)
		cerr := alice.CheckLaunch(context.Background(), tui.LaunchRequest{Template: "many", Kind: "plan", Answers: answers})
		if (code == 0) != (cerr == nil) {
			t.Errorf("%v: ssh exit %d %q, console %v", answers, code, errOut, cerr)
		}
		if strings.Contains(errOut, "SecretPin") || (cerr != nil && strings.Contains(cerr.Error(), "SecretPin")) {
			t.Errorf("a refusal quotes the sensitive pin: %q / %v", errOut, cerr)
		}
	}
}
