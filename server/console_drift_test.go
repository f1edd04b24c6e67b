package server

import (
	"context"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/tui"
)

// consoleCheck launches a drift check of template data through c, as the
// console's launcher does, and waits for it to succeed.
func consoleCheck(t *testing.T, h *harness, c *console) string {
	t.Helper()
	req := tui.LaunchRequest{Template: "data", Kind: "check"}
	if err := c.CheckLaunch(context.Background(), req); err != nil {
		t.Fatalf("CheckLaunch of a check: %v", err)
	}
	id, err := c.Launch(context.Background(), req)
	if err != nil {
		t.Fatalf("launching a check from the console: %v", err)
	}
	h.waitStatus(id, StatusSucceeded)
	return id
}

// A check launched from the console shows its drift per address (names,
// never values), the kept plan's digest and counts, and that a reconcile
// can be proposed; the console's Reconcile proposes it, held for a
// person, carrying exactly that digest; the check then says it was
// reconciled, and a second reconcile is refused with the server's sentence.
func TestConsoleDriftCheckAndReconcile(t *testing.T) {
	h := driftedData(t, "")
	ctx := context.Background()
	carol := consoleAs(h, h.identity("carol"))
	bob := consoleAs(h, h.identity("bob"))
	id := consoleCheck(t, h, carol)

	c := consoleRun(t, carol, id).Check
	if c == nil || !c.Finished || !c.Drifted || !c.Reconcilable || c.Destroy != 2 || c.Digest == "" {
		t.Fatalf("check = %+v", c)
	}
	if stored, _ := h.srv.db.GetRun(id); c.Digest != stored.Check.Plan.Digest {
		t.Fatalf("digest %s, the store's %s", c.Digest, stored.Check.Plan.Digest)
	}
	var changes []string
	for _, d := range c.Changes {
		changes = append(changes, d.Action+" "+d.Address)
	}
	if got := strings.Join(changes, ","); got != "delete terraform_data.server[3],delete terraform_data.server[4]" {
		t.Errorf("changes = %q", got)
	}
	if _, err := bob.Reconcile(ctx, id); err == nil || !strings.Contains(err.Error(), "launch role is missing") {
		t.Errorf("bob, who cannot launch, reconciled: %v", err)
	}

	rid, err := carol.Reconcile(ctx, id)
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	r := consoleRun(t, bob, rid)
	if r.Kind != "reconcile" || r.Status != "awaiting_approval" || r.Proposal == nil ||
		r.Proposal.Digest != c.Digest || r.Proposal.Holds[0].Rule != reconcileHold || !r.WaitingForMe {
		t.Fatalf("reconcile = %+v %+v", r.RunSummary, r.Proposal)
	}
	after := consoleRun(t, carol, id).Check
	if after.Reconcilable || after.ReconciledBy != rid || !strings.Contains(after.Reconcile, "reconciled by run "+rid) {
		t.Errorf("check after the reconcile = %+v", after)
	}
	if _, err := carol.Reconcile(ctx, id); err == nil || !strings.Contains(err.Error(), "already reconciled by run "+rid) {
		t.Errorf("second reconcile: %v", err)
	}
	if err := bob.Approve(ctx, rid, c.Digest); err != nil {
		t.Fatalf("approving the reconcile: %v", err)
	}
	h.waitStatus(rid, StatusSucceeded)
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers after the reconcile, want 3", n)
	}
}

// A check a newer one superseded says so in the console and cannot be
// reconciled; the refusal names the newer check.
func TestConsoleSupersededCheckIsNotReconcilable(t *testing.T) {
	h := driftedData(t, "")
	carol := consoleAs(h, h.identity("carol"))
	first := consoleCheck(t, h, carol)
	second := consoleCheck(t, h, carol)
	c := consoleRun(t, carol, first).Check
	if c.Reconcilable || c.SupersededBy != second || !strings.Contains(c.Reconcile, "superseded by check "+second) {
		t.Fatalf("superseded check = %+v", c)
	}
	if _, err := carol.Reconcile(context.Background(), first); err == nil || !strings.Contains(err.Error(), "dropped by check "+second) {
		t.Errorf("reconcile of a superseded check: %v", err)
	}
	if !consoleRun(t, carol, second).Check.Reconcilable {
		t.Error("the newer check cannot be reconciled")
	}
	if d := consoleRun(t, carol, "1"); d.Check != nil {
		t.Errorf("an apply carries a check: %+v", d.Check)
	}
}
