package server

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// driftedData applies the data configuration through Switchtender (3
// servers), then applies 5 by hand outside it: the state no longer says
// what the configuration says.
func driftedData(t *testing.T, extra string) *harness {
	h := newHarness(t, dataTemplates+extra)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	if n := h.stateCount(); n != 5 {
		t.Fatalf("the apply by hand left %d servers", n)
	}
	return h
}

// check launches a drift check of template data as alice and waits for it.
func (h *harness) check(want string) runView {
	h.t.Helper()
	out := h.mustSSH("alice", "launch", "data", "--check", "--wait")
	if !strings.Contains(out, "run "+want+": succeeded") {
		h.t.Fatalf("check %s:\n%s", want, out)
	}
	return h.show("alice", want)
}

// noPlaintextPlan fails the test if a plaintext plan file is anywhere in
// the data directory.
func (h *harness) noPlaintextPlan() {
	h.t.Helper()
	for _, f := range h.dataFiles() {
		if filepath.Base(f) == planFileName || filepath.Base(f) == planJSONName {
			h.t.Errorf("plaintext plan at rest: %s", f)
		}
	}
}

// A check reports what changed per address and keeps its plan sealed; the
// reconcile proposed from it carries that digest, is held whatever the
// rules say, and once approved the state returns to what the
// configuration says.
func TestCheckFindsDriftAndReconcileAppliesIt(t *testing.T) {
	h := driftedData(t, "")
	v := h.check("2")
	c := v.Check
	if c == nil || !c.Drifted || !c.Kept || c.Plan == nil || c.Plan.Destroy != 2 {
		t.Fatalf("check = %+v", c)
	}
	var addrs []string
	for _, d := range c.Changes {
		addrs = append(addrs, d.Action+" "+d.Address)
	}
	if got := strings.Join(addrs, ","); got != "delete terraform_data.server[3],delete terraform_data.server[4]" {
		t.Errorf("changes = %q", got)
	}
	if !strings.Contains(v.Message, "reconcile 2") || !strings.Contains(v.Reconcile, "reconcile 2") {
		t.Errorf("message %q, reconcile %q", v.Message, v.Reconcile)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, "2"); err != nil {
		t.Fatalf("no kept plan: %v", err)
	}
	h.noPlaintextPlan()
	text := h.mustSSH("alice", "show", "2")
	for _, want := range []string{"drift check", "delete terraform_data.server[3]", c.Plan.Digest, "reconcile 2"} {
		if !strings.Contains(text, want) {
			t.Errorf("show 2 lacks %q:\n%s", want, text)
		}
	}

	out := h.mustSSH("carol", "reconcile", "2")
	if !strings.Contains(out, "run 3: awaiting_approval") {
		t.Fatalf("reconcile:\n%s", out)
	}
	r := h.show("bob", "3")
	p := r.Proposal
	if r.Kind != KindReconcile || r.ReconcileOf != "2" || p.Digest != c.Plan.Digest || p.Holds[0].Rule != reconcileHold || p.Destroy != 2 {
		t.Fatalf("reconcile = %+v %+v", r.Run, p)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, "2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the check's blob is kept after the reconcile took it: %v", err)
	}
	if v := h.show("alice", "2"); v.Check.ReconciledBy != "3" || !strings.Contains(v.Reconcile, "reconciled by run 3") {
		t.Errorf("check after reconcile: %+v %q", v.Check, v.Reconcile)
	}
	h.mustSSH("bob", "approve", "3", "--digest", p.Digest)
	h.waitStatus("3", StatusSucceeded)
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers after the reconcile, want 3", n)
	}
	done, _ := h.srv.db.GetRun("3")
	if releasedDigest(done) != c.Plan.Digest || !done.Proposal.Used {
		t.Errorf("applied %q, check showed %q", releasedDigest(done), c.Plan.Digest)
	}
	h.noPlaintextPlan()
	audit := h.mustSSH("bob", "audit")
	for _, want := range []string{"drift", "reconcile", "approve", "succeeded"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit lacks %q:\n%s", want, audit)
		}
	}
	if _, errOut, code := h.ssh("alice", "reconcile", "2"); code != 1 || !strings.Contains(errOut, "already reconciled by run 3") {
		t.Errorf("reconcile twice: %d %q", code, errOut)
	}
}

// Two checks in a row: the second drops the plan the first kept, and a
// reconcile from the first is refused naming the second.
func TestSecondCheckSupersedesTheFirst(t *testing.T) {
	h := driftedData(t, "")
	h.check("2")
	v := h.check("3")
	if !v.Check.Kept {
		t.Fatalf("second check kept nothing: %+v", v.Check)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, "2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the first check's blob is still there: %v", err)
	}
	first := h.show("alice", "2")
	if first.Check.SupersededBy != "3" || first.Check.Kept || !strings.Contains(first.Reconcile, "superseded by check 3") {
		t.Errorf("first check = %+v %q", first.Check, first.Reconcile)
	}
	if _, errOut, code := h.ssh("alice", "reconcile", "2"); code != 1 || !strings.Contains(errOut, "dropped by check 3") {
		t.Errorf("reconcile of the superseded check: %d %q", code, errOut)
	}
	// A later check that finds no drift drops the kept plan as well.
	h.mustSSH("alice", "launch", "data", "--wait")
	nd := h.check("5")
	if nd.Check == nil || nd.Check.Drifted || !strings.Contains(nd.Message, "No drift") || !strings.Contains(nd.Reconcile, "no drift") {
		t.Fatalf("no-drift check = %+v %q %q", nd.Check, nd.Message, nd.Reconcile)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, "5"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a check with no drift kept a plan: %v", err)
	}
	if _, err := h.srv.db.GetBlob(blobDrift, "3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a no-drift check left the earlier plan: %v", err)
	}
	if _, errOut, code := h.ssh("alice", "reconcile", "5"); code != 1 || !strings.Contains(errOut, "found no drift") {
		t.Errorf("reconcile of a no-drift check: %d %q", code, errOut)
	}
	if _, errOut, code := h.ssh("alice", "reconcile", "3"); code != 1 || !strings.Contains(errOut, "dropped by check 5") {
		t.Errorf("reconcile of a check a no-drift check superseded: %d %q", code, errOut)
	}
	h.noPlaintextPlan()
}

// A reconcile approved after the state changed outside Switchtender ends
// stale, says to run the check again, and changes nothing; one whose
// working directory another run changed is shown stale before approval.
func TestStaleReconcile(t *testing.T) {
	h := driftedData(t, "")
	h.check("2")
	h.mustSSH("alice", "reconcile", "2")
	p := h.show("bob", "3").Proposal
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=7")
	_, errOut, code := h.ssh("bob", "approve", "3", "--digest", p.Digest)
	if code != 1 || !strings.Contains(errOut, "stale") || !strings.Contains(errOut, "Run the check again") {
		t.Fatalf("approving a stale reconcile: %d %q", code, errOut)
	}
	h.waitStatus("3", StatusStale)
	if n := h.stateCount(); n != 7 {
		t.Fatalf("a stale reconcile changed the state: %d servers", n)
	}
	if _, err := h.srv.db.GetBlob(blobPlan, "3"); err == nil {
		t.Error("a stale reconcile's plan is kept")
	}

	// Held beside another run of the directory: checkStale covers it.
	h.check("4")
	h.mustSSH("alice", "reconcile", "4")
	h.mustSSH("alice", "launch", "data-free", "--var", "instances=2", "--wait")
	h.waitStatus("5", StatusStale)
	r := h.show("bob", "5")
	if !r.Stale || !strings.Contains(r.StaleReason, "Run the check again") {
		t.Errorf("held reconcile after another apply: %s %q", r.Status, r.StaleReason)
	}
}

// The stale message of a reconcile whose plan OpenTofu or the basis check
// refuses at apply time says to run the check again.
func TestReconcileStaleMessage(t *testing.T) {
	msg := staleMessage(store.Run{ID: "9", Kind: KindReconcile, ReconcileOf: "4", Template: "data"})
	if !strings.Contains(msg, "check 4") || !strings.Contains(msg, "launch data --check") || !strings.Contains(msg, "reconcile") {
		t.Errorf("message = %q", msg)
	}
}

// Hostile reconciles: of a dry run, of an apply, of a check still
// unknown, by someone without the launch role; an agent's is held anyway;
// two at once: exactly one succeeds.
func TestReconcileRefusalsAndRaces(t *testing.T) {
	h := driftedData(t, "")
	h.mustSSH("alice", "launch", "data", "--dry-run", "--wait")
	for _, c := range []struct{ user, id, want string }{
		{"alice", "1", "is an apply, not a drift check"},
		{"alice", "2", "is a dry run, not a drift check"},
		{"alice", "99", "99"},
		{"bob", "2", "launch role is missing"},
	} {
		if _, errOut, code := h.ssh(c.user, "reconcile", c.id); code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("reconcile %s by %s: %d %q, want %q", c.id, c.user, code, errOut, c.want)
		}
	}
	if _, errOut, code := h.ssh("alice", "launch", "data", "--check", "--dry-run"); code != 2 || !strings.Contains(errOut, "--check") {
		t.Errorf("--check with --dry-run: %d %q", code, errOut)
	}
	h.check("3")
	out := h.mustSSH("deploy-bot", "reconcile", "3", "--json")
	if !strings.Contains(out, `"status": "awaiting_approval"`) && !strings.Contains(out, `"status":"awaiting_approval"`) {
		t.Fatalf("agent's reconcile:\n%s", out)
	}
	if _, errOut, code := h.ssh("deploy-bot", "approve", "4", "--digest", h.show("bob", "4").Proposal.Digest); code != 1 || !strings.Contains(errOut, "agents cannot approve") {
		t.Errorf("agent approving its reconcile: %d %q", code, errOut)
	}
	h.mustSSH("bob", "reject", "4", "--reason", "not now")

	h.check("5")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, refused int
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.srv.Reconcile(context.Background(), h.identity("alice"), "5")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			} else if strings.Contains(err.Error(), "already reconciled") {
				refused++
			}
		}()
	}
	wg.Wait()
	if ok != 1 || refused != 3 {
		t.Errorf("concurrent reconciles: %d succeeded, %d refused", ok, refused)
	}
	if n := h.stateCount(); n != 5 {
		t.Errorf("no reconcile was approved, yet the state has %d servers", n)
	}
}

// A kept plan survives a restart: the reconcile is proposed afterwards and
// applies the digest the check showed; no plaintext plan anywhere.
func TestKeptPlanSurvivesRestart(t *testing.T) {
	h := driftedData(t, "")
	digest := h.check("2").Check.Plan.Digest
	h.restart()
	h.noPlaintextPlan()
	h.mustSSH("alice", "reconcile", "2")
	h.mustSSH("bob", "approve", "3", "--digest", digest)
	h.waitStatus("3", StatusSucceeded)
	if r, _ := h.srv.db.GetRun("3"); releasedDigest(r) != digest || h.stateCount() != 3 {
		t.Errorf("after restart: applied %q, %d servers", releasedDigest(r), h.stateCount())
	}
}

// A drift check under exclude_dry_run with a finding is held at the scan
// stage before any plan.
func TestADriftCheckWithAFindingIsHeldAtTheScan(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-deep", "--check")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageScan ||
		strings.Contains(h.mustSSH("bob", "log", v.ID), "$ tofu plan") {
		t.Fatalf("a drift check with an external data source: %s (%s)", v.Status, v.Message)
	}
}
