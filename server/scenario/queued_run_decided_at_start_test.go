package scenario

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// waitConfig is an apply that holds the only slot until its working
// directory has a file named release.
const waitConfig = `resource "terraform_data" "wait" {
  provisioner "local-exec" {
    command = "while [ ! -f release ]; do sleep 0.1; done"
  }
}
`

const waitTemplate = `
template "wait" {
  project = "infra"
  command = "infra/wait"
}
`

// slotHarness is a logged control node with one slot (max_parallel = 1)
// and a template "wait" whose apply keeps that slot until release is
// called, so a run launched meanwhile waits in the queue.
func slotHarness(t *testing.T, extra string) (h *harness, logs *logBuffer, release func()) {
	t.Helper()
	h = writeHarness(t, "  max_parallel = 1\n", dataTemplates+waitTemplate+extra)
	dir := filepath.Join(h.project, "infra/wait")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(waitConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	logs = &logBuffer{}
	h.logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.start()
	h.mustSSH("alice", "launch", "wait")
	h.waitStatus("1", store.StatusRunning)
	return h, logs, func() {
		if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		h.waitStatus("1", store.StatusSucceeded)
	}
}

// queued launches args as user and checks the run waits in the queue.
func (h *harness) queued(user string, args ...string) string {
	h.t.Helper()
	var v api.RunView
	out := h.mustSSH(user, append(append([]string{"launch"}, args...), "--json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		h.t.Fatalf("launch %v: %v\n%s", args, err, out)
	}
	if v.Status != store.StatusQueued {
		h.t.Fatalf("run %s is %s, want it queued behind the wait apply: %s", v.ID, v.Status, v.Message)
	}
	return v.ID
}

// heldAtStart waits for run id to be held before it planned by rule, and
// checks that no step of it ran.
func (h *harness) heldAtStart(id, rule string) api.RunView {
	h.t.Helper()
	h.waitStatus(id, store.StatusAwaitingApproval, store.StatusSucceeded, store.StatusFailed)
	v := h.show("bob", id)
	if v.Status != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != store.StageRequest {
		h.t.Fatalf("run %s is %s (%s), want held before planning", id, v.Status, v.Message)
	}
	if !slices.ContainsFunc(v.Proposal.Holds, func(hd store.Hold) bool { return hd.Rule == rule }) {
		h.t.Errorf("run %s is held by %+v, want rule %s", id, v.Proposal.Holds, rule)
	}
	if len(v.Steps) != 0 {
		h.t.Errorf("run %s ran %v before it was held", id, stepNames(v))
	}
	testkit.MustContain(h.t, "the held run's message", v.Message, "Held when it started", "rules in force now")
	return v
}

// A dry run queued under a rule's exclude_dry_run, which a reload then
// removes, is held when it starts, before init; the operator log names it
// at the reload; released, it plans once and is not held again. It once
// planned with no hold and no scan, and its program ran.
func TestQueuedDryRunIsHeldWhenAReloadRemovedItsExemption(t *testing.T) {
	t.Parallel()
	h, logs, release := slotHarness(t, `
rule "dry-gate" {
  templates        = ["data"]
  require_approval = true
  exclude_dry_run  = true
}
`)
	id := h.queued("alice", "data", "--dry-run")
	h.reloadReplacing("  exclude_dry_run  = true\n", "")
	logs.WaitFor(t, `"msg":"reload: a queued run will start otherwise under the new rules","run":"`+id+`"`)
	testkit.MustContain(t, "the reload's log", logs.String(), `"before":"scanned first (exclude_dry_run)"`, `"now":"held before planning by rule dry-gate"`)
	release()
	v := h.heldAtStart(id, "dry-gate")
	logs.WaitFor(t, `"msg":"start: the rules in force now hold a queued run before planning","run":"`+id+`"`)
	h.mustSSH("bob", "approve", id, "--digest", v.Proposal.Digest)
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusAwaitingApproval)
	if done := h.show("bob", id); done.Status != store.StatusSucceeded {
		t.Fatalf("the released dry run is %s: %s", done.Status, done.Message)
	}
}

// A dry run queued with no rule is scanned when it starts under a rule a
// reload added with exclude_dry_run.
func TestQueuedDryRunIsScannedWhenAReloadAddedAnExemption(t *testing.T) {
	t.Parallel()
	h, logs, release := slotHarness(t, "")
	id := h.queued("alice", "data", "--dry-run")
	h.reloadWith(`
rule "dry-gate" {
  templates        = ["data"]
  require_approval = true
  exclude_dry_run  = true
}
`)
	logs.WaitFor(t, `"run":"`+id+`","template":"data","kind":"plan","before":"runs without a hold or a scan","now":"scanned first (exclude_dry_run)"`)
	release()
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusAwaitingApproval)
	v := h.show("bob", id)
	if v.Status != store.StatusSucceeded || v.Scan == nil || v.Scan.Why != runstep.ScanForExemption || v.Scan.Modules < 1 {
		t.Fatalf("the queued dry run is %s with scan %+v, want scanned and planned", v.Status, v.Scan)
	}
}

// An apply queued with no rule is held with its saved plan when a reload
// added a require_approval rule before it started; nothing is applied.
func TestQueuedApplyIsHeldWhenAReloadAddedRequireApproval(t *testing.T) {
	t.Parallel()
	h, logs, release := slotHarness(t, "")
	id := h.queued("alice", "data")
	h.reloadWith(approveAllData)
	logs.WaitFor(t, `"before":"runs without a hold or a scan","now":"planned and decided on its saved plan"`)
	release()
	h.waitStatus(id, store.StatusAwaitingApproval, store.StatusSucceeded, store.StatusFailed)
	v := h.show("bob", id)
	if v.Status != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != store.StagePlan || v.Proposal.Holds[0].Rule != "everything" {
		t.Fatalf("the queued apply is %s (%s), want held with its plan by rule everything", v.Status, v.Message)
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/data/terraform.tfstate")); err == nil {
		t.Error("the queued apply applied before anyone released it")
	}
}

// An agent's dry run queued under an exemption a reload then removes is
// held for a person when it starts.
func TestQueuedAgentRunIsHeldWhenAReloadRemovedItsExemption(t *testing.T) {
	t.Parallel()
	bot := "exemption \"bot\" {\n  agents = [\"deploy-bot\"]\n  templates = [\"data\"]\n}\n"
	h, _, release := slotHarness(t, bot)
	id := h.queued("deploy-bot", "data", "--dry-run")
	h.reloadReplacing(bot, "")
	release()
	h.heldAtStart(id, "agent")
}

// A drift check queued before a reload adds a rule with kinds = ["check"]
// is held by it when it starts; a dry run queued beside it is not.
func TestQueuedCheckIsHeldByACheckRuleAReloadAdded(t *testing.T) {
	t.Parallel()
	h, _, release := slotHarness(t, "")
	check := h.queued("alice", "data", "--check")
	dry := h.queued("alice", "data-free", "--dry-run")
	h.reloadWith(`
rule "checks" {
  kinds            = ["check"]
  require_approval = true
  approvers        = ["alice"]
}
`)
	release()
	v := h.heldAtStart(check, "checks")
	if a := v.Proposal.Holds[0].Approvers; len(a) != 1 || a[0] != "alice" {
		t.Errorf("the check is held for %v, want alice", a)
	}
	h.waitStatus(dry, store.StatusSucceeded, store.StatusFailed, store.StatusAwaitingApproval)
	if d := h.show("bob", dry); d.Status != store.StatusSucceeded {
		t.Errorf("a dry run was held by a rule for checks: %s %s", d.Status, d.Message)
	}
}

// A pool's dry run queued while no worker is connected, under an
// exclude_dry_run a reload then removes, is held when a worker would take
// it: no worker plans it before a person releases it.
func TestRelayQueuedDryRunIsHeldWhenAReloadRemovedItsExemption(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, `
rule "dry-gate" {
  templates        = ["rnet"]
  require_approval = true
  exclude_dry_run  = true
}
`)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=q", "--json"))
	if r, _ := h.db().GetRun(id); r.Status != store.StatusQueued {
		t.Fatalf("the pool's dry run is %s, want queued", r.Status)
	}
	h.reloadReplacing("  exclude_dry_run  = true\n", "")
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	v := h.heldAtStart(id, "dry-gate")
	if v.PlannedBy != "" {
		t.Errorf("worker %s took the run before it was released", v.PlannedBy)
	}
	h.mustSSH("bob", "approve", id, "--digest", v.Proposal.Digest)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if r, _ := h.db().GetRun(id); r.Status.Final() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if done := h.show("bob", id); done.Status != store.StatusSucceeded || done.PlannedBy != "w1" {
		t.Fatalf("the released pool dry run is %s by %q: %s", done.Status, done.PlannedBy, done.Message)
	}
	if !strings.Contains(h.mustSSH("bob", "log", id), "vpc-q") {
		t.Error("the released pool dry run's log lacks its plan")
	}
}
