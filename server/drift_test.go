package server

import (
	"errors"
	"path/filepath"
	"strings"
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
	if r.Kind != string(KindReconcile) || r.ReconcileOf != "2" || p.Digest != c.Plan.Digest || p.Holds[0].Rule != reconcileHold || p.Destroy != 2 {
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
