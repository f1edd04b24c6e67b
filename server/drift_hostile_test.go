package server

// Hostile tests of drift checks and reconciles: each puts an attack to a
// check or a reconcile and asserts the promise the attack would break.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/schedule"
	"github.com/switchtender/switchtender/store"
)

// rewriteConfig appends extra to the harness's configuration and restarts
// the server on the same data directory.
func (h *harness) rewriteConfig(extra string) {
	h.t.Helper()
	b, err := os.ReadFile(h.cfgPath)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.cfgPath, append(b, []byte(extra)...), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.restart()
}

// holdRules are the rules holding run id's proposal.
func holdRules(v runView) []string {
	var out []string
	if v.Proposal != nil {
		for _, hd := range v.Proposal.Holds {
			out = append(out, hd.Rule)
		}
	}
	return out
}

// A rule that names who must release an agent's applies: deploy-bot's
// reconcile of a check alice launched is an apply deploy-bot asked for, so
// the rule holds it for dave. Once, the reconcile copied the check's
// decision, made for alice.
func TestAReconcileIsHeldForTheApproversOfItsOwnRequester(t *testing.T) {
	h := driftedData(t, `
rule "bot-applies" {
  templates        = ["data"]
  requesters       = ["deploy-bot"]
  require_approval = true
  approvers        = ["dave"]
}
`)
	h.check("2")
	h.mustSSH("deploy-bot", "reconcile", "2")
	r := h.show("bob", "3")
	if !slices.Contains(holdRules(r), "bot-applies") {
		t.Errorf("deploy-bot's reconcile is held by %v, not by rule bot-applies, which holds deploy-bot's applies for dave", holdRules(r))
	}
	_, _, _ = h.ssh("bob", "approve", "3", "--digest", r.Proposal.Digest)
	if v := h.show("bob", "3"); v.Status != StatusAwaitingApproval {
		h.waitStatus("3", StatusSucceeded, StatusFailed, StatusStale)
		t.Errorf("bob alone released deploy-bot's reconcile (now %s, %d servers); rule bot-applies names dave only", h.show("bob", "3").Status, h.stateCount())
	}
}

// The rules changed after the check (a max_destroy = 0 rule naming dave): the
// reconcile is an apply proposed now, so the rules as they are now hold it.
// Once, it copied the holds the check's plan had.
func TestAReconcileIsHeldByTheRulesAsTheyAreNow(t *testing.T) {
	h := driftedData(t, "")
	h.check("2")
	h.rewriteConfig(`
rule "no-destroys" {
  templates   = ["data"]
  max_destroy = 0
  approvers   = ["dave"]
}
`)
	h.mustSSH("alice", "reconcile", "2")
	r := h.show("bob", "3")
	if !slices.Contains(holdRules(r), "no-destroys") {
		t.Errorf("the reconcile (destroys %d) is held by %v, not by rule no-destroys configured since the check", r.Proposal.Destroy, holdRules(r))
	}
	_, _, _ = h.ssh("bob", "approve", "3", "--digest", r.Proposal.Digest)
	if v := h.show("bob", "3"); v.Status != StatusAwaitingApproval {
		h.waitStatus("3", StatusSucceeded, StatusFailed, StatusStale)
		t.Errorf("bob alone released a reconcile destroying 2 under a max_destroy = 0 rule naming dave (now %s, %d servers)", h.show("bob", "3").Status, h.stateCount())
	}
}

// The template changed since the check: it now works in another
// directory. The check's plan is for infra/data, which the template no
// longer names; a reconcile under that template's name should be refused
// (as rerun refuses an incompatible template) rather than apply in a
// directory the template no longer manages.
func TestAReconcileUnderATemplateThatMovedIsRefused(t *testing.T) {
	h := driftedData(t, "")
	h.check("2")
	b, err := os.ReadFile(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(b), "template \"data\" {\n  project = \"infra\"\n  command = \"infra/data\"", "template \"data\" {\n  project = \"infra\"\n  command = \"infra/network\"", 1)
	if moved == string(b) {
		t.Fatal("the template was not rewritten")
	}
	if err := os.WriteFile(h.cfgPath, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	h.restart()
	out, errOut, code := h.ssh("alice", "reconcile", "2")
	if code == 0 {
		t.Errorf("reconcile of a check whose template now works in infra/network was accepted: %s", out)
	} else {
		t.Logf("refused: %s", errOut)
	}
}

// A reconcile beside a held apply of the same working directory: whichever
// is approved first, the other goes stale and applies nothing.
func TestAReconcileBesideAHeldApplyLeavesTheOtherStale(t *testing.T) {
	h := driftedData(t, `
rule "free" {
  templates        = ["data-free"]
  kinds            = ["apply"]
  require_approval = true
}
`)
	h.check("2")
	if out := h.mustSSH("alice", "launch", "data-free", "--var", "instances=2", "--wait"); !strings.Contains(out, "run 3: awaiting_approval") {
		t.Fatalf("held apply:\n%s", out)
	}
	h.mustSSH("alice", "reconcile", "2")
	// The held apply first: the reconcile (run 4) must go stale.
	h.mustSSH("bob", "approve", "3", "--digest", h.show("bob", "3").Proposal.Digest)
	h.waitStatus("3", StatusSucceeded)
	r := h.show("bob", "4")
	if !r.Stale {
		_, errOut, code := h.ssh("bob", "approve", "4", "--digest", r.Proposal.Digest)
		if code == 0 {
			h.waitStatus("4", StatusSucceeded, StatusFailed, StatusStale)
		}
		t.Errorf("the reconcile held beside an apply that then changed the state is %s, not stale (approve: %d %q; %d servers)", r.Status, code, errOut, h.stateCount())
	}
	if n := h.stateCount(); n != 2 {
		t.Errorf("the state holds %d servers, want the held apply's 2", n)
	}
	// The reconcile first: the held apply must go stale.
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	h.check("5")
	h.mustSSH("alice", "launch", "data-free", "--var", "instances=1", "--wait") // run 6, held
	h.mustSSH("alice", "reconcile", "5")                                        // run 7
	h.mustSSH("bob", "approve", "7", "--digest", h.show("bob", "7").Proposal.Digest)
	h.waitStatus("7", StatusSucceeded)
	if a := h.show("bob", "6"); !a.Stale {
		t.Errorf("the held apply beside a reconcile that changed the state is %s, not stale", a.Status)
	}
	if n := h.stateCount(); n != 3 {
		t.Errorf("the state holds %d servers after the reconcile, want 3", n)
	}
}

// A check completing while a reconcile of the check before it is
// proposed: the reconcile either carries the earlier plan (the check is
// marked reconciled, not superseded) or is refused naming the newer check;
// never both, never a reconcile without its sealed plan.
func TestACheckCompletingDuringAReconcileNeverSplitsIt(t *testing.T) {
	h := driftedData(t, "")
	first := h.check("2")
	var wg sync.WaitGroup
	var recErr error
	var rec store.Run
	wg.Add(2)
	go func() {
		defer wg.Done()
		h.mustSSH("alice", "launch", "data", "--check", "--wait")
	}()
	go func() {
		defer wg.Done()
		h.waitStatus("3", StatusRunning, StatusSucceeded)
		rec, recErr = h.srv.Reconcile(context.Background(), h.identity("alice"), first.ID)
	}()
	wg.Wait()
	c, _ := h.srv.db.GetRun(first.ID)
	if recErr == nil {
		if c.Check.ReconciledBy != rec.ID || c.Check.SupersededBy != "" {
			t.Errorf("reconciled, but the check records %+v", c.Check)
		}
		if _, err := h.srv.db.GetBlob(blobPlan, rec.ID); err != nil {
			t.Errorf("reconcile %s has no sealed plan: %v", rec.ID, err)
		}
	} else if c.Check.SupersededBy != "3" || c.Check.ReconciledBy != "" || !strings.Contains(recErr.Error(), "dropped by check 3") {
		t.Errorf("refused (%v), but the check records %+v", recErr, c.Check)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, first.ID); err == nil {
		t.Errorf("check %s's blob is still kept", first.ID)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, "3"); err != nil {
		t.Errorf("the newer check kept no plan: %v", err)
	}
}

// A check made before any state existed keeps a plan from the empty state;
// once a state appears, the reconcile from it can never apply and must not.
func TestAReconcileFromTheEmptyStateNeverAppliesOnceAStateExists(t *testing.T) {
	h := newHarness(t, dataTemplates)
	out := h.mustSSH("alice", "launch", "data", "--check", "--wait")
	if !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("check:\n%s", out)
	}
	if c := h.show("alice", "1").Check; c == nil || !c.Kept || c.Plan.Lineage != "" {
		t.Fatalf("check from no state = %+v", c)
	}
	h.mustSSH("alice", "reconcile", "1")
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=2")
	r := h.show("bob", "2")
	if !r.Stale {
		t.Errorf("the reconcile of a plan made from no state is %s, not stale, once a state exists", r.Status)
	}
	_, errOut, code := h.ssh("bob", "approve", "2", "--digest", r.Proposal.Digest)
	if code == 0 {
		h.waitStatus("2", StatusSucceeded, StatusFailed, StatusStale)
	}
	if n := h.stateCount(); n != 2 {
		t.Errorf("approving it (%d %q) changed the state: %d servers", code, errOut, n)
	}
	// And the reconcile proposed after the state appeared, from the old check.
	h2 := newHarness(t, dataTemplates)
	h2.mustSSH("alice", "launch", "data", "--check", "--wait")
	h2.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=2")
	h2.mustSSH("alice", "reconcile", "1")
	r2 := h2.show("bob", "2")
	_, _, code = h2.ssh("bob", "approve", "2", "--digest", r2.Proposal.Digest)
	if code == 0 {
		h2.waitStatus("2", StatusSucceeded, StatusFailed, StatusStale)
	}
	if n := h2.stateCount(); n != 2 || !h2.show("bob", "2").Stale && h2.show("bob", "2").Status == StatusSucceeded {
		t.Errorf("a reconcile from no state proposed after a state appeared: %s, %d servers", h2.show("bob", "2").Status, n)
	}
}

const attackSecretTemplate = `
template "secret" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" {
    type = "string"
  }
  survey "api_note" {
    type      = "string"
    sensitive = true
  }
  survey "generation" {
    type    = "string"
    default = "1"
  }
}
`

// Secrets in a check: a sensitive answer and state-sensitive values the
// state holds (changed by hand) appear nowhere: not in show, show --json,
// the log, the check record, the audit or the raw store; the drift list
// names attributes, never values.
func TestACheckShowsNoSecret(t *testing.T) {
	const handDB = "hand-db-canary-71c0e3aa"
	const handNote = "hand-note-canary-2b9f41d0"
	h := newHarness(t, attackSecretTemplate)
	answers := []string{"--var", "db_password=" + canaryDB, "--var", "api_note=" + canaryNote}
	if out := h.mustSSH("alice", append([]string{"launch", "secret", "--wait"}, answers...)...); !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("apply:\n%s", out)
	}
	// The one-step apply above already leaves the derived value in the
	// store (its provisioner prints it, and no saved plan told the masker
	// it is sensitive): not the check's doing, so only what is new counts.
	already := map[string]bool{}
	for _, f := range h.dataFiles() {
		if b, err := os.ReadFile(f); err == nil {
			for _, l := range formsOf([]string{canaryDB, canaryNote, canaryDerived()}).find(f, b) {
				t.Logf("before the check (not the check's doing): %s", l)
				already[l] = true
			}
		}
	}
	h.tofuByHand("infra/secret", "apply", "-auto-approve", "-input=false", "-var", "db_password="+handDB, "-var", "api_note="+handNote)
	out := h.mustSSH("alice", append([]string{"launch", "secret", "--check", "--wait"}, answers...)...)
	if !strings.Contains(out, "run 2: succeeded") {
		t.Fatalf("check:\n%s", out)
	}
	sum := sha256.Sum256([]byte(handDB))
	canaries := []string{canaryDB, canaryNote, canaryDerived(), handDB, "derived-" + hex.EncodeToString(sum[:])}
	cf := formsOf(canaries)
	var found []string
	found = append(found, cf.find("--wait output", []byte(out))...)
	found = append(found, cf.find("show 2", []byte(h.mustSSH("bob", "show", "2")))...)
	js := h.mustSSH("bob", "show", "2", "--json")
	found = append(found, cf.find("show 2 --json", []byte(js))...)
	found = append(found, cf.find("log 2", []byte(h.mustSSH("bob", "log", "2")))...)
	found = append(found, cf.find("audit", []byte(h.mustSSH("bob", "audit")))...)
	run, _ := h.srv.db.GetRun("2")
	rec, _ := json.Marshal(run.Check)
	found = append(found, cf.find("the check record", rec)...)
	for _, f := range h.dataFiles() {
		b, err := os.ReadFile(f)
		if err == nil {
			for _, l := range cf.find(f, b) {
				if !already[l] {
					found = append(found, l)
				}
			}
		}
	}
	for _, f := range found {
		t.Errorf("a secret in the clear: %s", f)
	}
	// The note's value set by hand outside Switchtender is not checked: the
	// masker never saw it, and the configuration declares api_note plain
	// (docs/secrets.md, "What masking cannot do": declare the variable sensitive).
	_ = handNote
	// The drift list holds names only.
	if run.Check == nil || !run.Check.Drifted {
		t.Fatalf("check = %+v", run.Check)
	}
	for _, d := range append(append([]store.ResourceDiff{}, run.Check.Drift...), run.Check.Changes...) {
		for _, a := range d.Attributes {
			if strings.ContainsAny(a, " =\"") || strings.Contains(a, "canary") {
				t.Errorf("a drift attribute that is not a name: %q of %s", a, d.Address)
			}
		}
	}
	// The reconcile re-seals the answers and its show masks them too.
	h.mustSSH("alice", "reconcile", "2")
	for _, f := range cf.find("show 3 --json", []byte(h.mustSSH("bob", "show", "3", "--json"))) {
		t.Errorf("a secret in the clear: %s", f)
	}
}

// A scheduled check and a manual check racing for one working directory: the
// manual check lands after the schedule read the runs and before it launched,
// and one check of the directory stays pending, as the schedule promises.
// Once, two were.
func TestAScheduledAndAManualCheckLeaveOneCheckPending(t *testing.T) {
	h := newHarness(t, dataTemplates)
	cfg := *h.srv.config()
	tpl := *cfg.Templates["data-free"]
	tpl.CheckEvery = 1
	cfg.Templates = map[string]*config.Template{"data-free": &tpl}
	c := schedule.NewChecks(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), schedule.Funcs{
		ListRuns: func() ([]store.Run, error) {
			runs, err := h.srv.db.ListRuns()
			// Someone launches a check by hand right now.
			if _, lerr := h.srv.Launch(context.Background(), h.identity("alice"), LaunchRequest{Template: "data", Kind: KindCheck}); lerr != nil {
				t.Fatal(lerr)
			}
			return runs, err
		},
		WorkdirOf: func(t *config.Template) string {
			wd, _ := h.srv.workdir(store.Run{Project: t.Project, Command: t.Command})
			return wd
		},
		LaunchCheck: func(template string) error {
			_, err := h.srv.Launch(context.Background(), scheduleIdentity, LaunchRequest{Template: template, Kind: KindCheck})
			return err
		},
	})
	c.Tick(context.Background())
	runs, _ := h.srv.db.ListRuns()
	pending := 0
	for _, r := range runs {
		if r.Kind == KindCheck && (r.Status.Active() || r.Status == StatusAwaitingApproval) {
			pending++
		}
	}
	if pending > 1 {
		t.Errorf("%d checks of infra/data pending after a scheduled and a manual check raced; the schedule promises at most one", pending)
	}
	h.waitStatus("1", StatusSucceeded)
	h.waitStatus(strconv.Itoa(len(runs)), StatusSucceeded)
}

// --check with the flags that do not go with it is refused and queues
// nothing; a rerun of a check is a check; a rerun of a rejected reconcile
// is refused (a kept plan is proposed once), not turned into an apply.
func TestCheckRefusesTheFlagsThatDoNotGoWithIt(t *testing.T) {
	h := driftedData(t, "")
	for _, args := range [][]string{
		{"--check", "--require-approval"},
		{"--check", "--ai-proposal"},
		{"--check", "--dry-run"},
		{"--dry-run", "--check"},
		{"--check", "--check=false", "--dry-run", "--check"},
	} {
		if out, errOut, code := h.ssh("alice", append([]string{"launch", "data"}, args...)...); code == 0 {
			t.Errorf("launch data %v was accepted: %s", args, out)
		} else if !strings.Contains(errOut, "--check") && !strings.Contains(errOut, "check") {
			t.Errorf("launch data %v refused without naming --check: %q", args, errOut)
		}
	}
	if runs, _ := h.srv.db.ListRuns(); len(runs) != 1 {
		t.Errorf("refused launches queued runs: %d runs", len(runs))
	}
	// --check with --answers and --json works.
	out, errOut, code := h.sshStdin("alice", `{"instances": 3}`, "launch", "data", "--check", "--answers", "-", "--wait", "--json")
	if code != 0 || !strings.Contains(out, `"kind"`) {
		t.Fatalf("--check --answers - --wait --json: %d %q %q", code, out, errOut)
	}
	h.waitStatus("2", StatusSucceeded)
	if v := h.show("alice", "2"); v.Kind != KindCheck || v.Check == nil || !v.Check.Kept {
		t.Errorf("check with --answers: kind %s, check %+v", v.Kind, v.Check)
	}
	h.mustSSH("alice", "rerun", "2", "--wait")
	if v := h.show("alice", "3"); v.Kind != KindCheck || v.Check == nil || !v.Check.Kept {
		t.Errorf("the rerun of a check is %s with %+v", v.Kind, v.Check)
	}
	h.mustSSH("alice", "reconcile", "3")
	h.mustSSH("bob", "reject", "4")
	if out, _, code := h.ssh("alice", "rerun", "4"); code == 0 {
		t.Errorf("rerun of a rejected reconcile was accepted: %s", out)
	}
	if n := h.stateCount(); n != 5 {
		t.Errorf("the state changed: %d servers", n)
	}
}

// show --json of a superseded check: kept false, superseded_by the newer
// check, reconcile saying why not, the digest it showed still there, and
// no holds or waiting.
func TestShowJSONOfASupersededCheckSaysWhyItCannotReconcile(t *testing.T) {
	h := driftedData(t, "")
	digest := h.check("2").Check.Plan.Digest
	h.check("3")
	raw := h.showRaw("bob", "2")
	c, _ := raw["check"].(map[string]any)
	if c == nil {
		t.Fatalf("show 2 --json has no check: %v", raw)
	}
	if c["kept"] != false || c["superseded_by"] != "3" || c["reconciled_by"] != "" {
		t.Errorf("check = %v", c)
	}
	if p, _ := c["plan"].(map[string]any); p == nil || p["digest"] != digest {
		t.Errorf("the superseded check's plan digest: %v, want %s", c["plan"], digest)
	}
	if rc, _ := raw["reconcile"].(string); !strings.Contains(rc, "superseded by check 3") {
		t.Errorf("reconcile = %q", rc)
	}
	if raw["waiting_for_you"] == true || raw["waiting"] != nil || len(raw["holds"].([]any)) != 0 || raw["stale"] == true {
		t.Errorf("a superseded check shows something to act on: waiting %v, waiting_for_you %v, holds %v, stale %v", raw["waiting"], raw["waiting_for_you"], raw["holds"], raw["stale"])
	}
	if raw["status"] != string(StatusSucceeded) {
		t.Errorf("status = %v", raw["status"])
	}
	text := h.mustSSH("bob", "show", "2")
	if !strings.Contains(text, "superseded by check 3") {
		t.Errorf("show 2:\n%s", text)
	}
}
