package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// An approver who opens an older held plan's change set is told, above it,
// what show and the console tell them: a newer proposal for the same
// working directory exists, and which run it is.
func TestShowChangesNamesANewerProposal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.mustSSH("alice", "launch", "data", "--var", "instances=2", "--wait")
	if v1 := h.show("bob", "1"); v1.NewerProposal != "2" {
		t.Fatalf("run 1's newer proposal is %q; want run 2", v1.NewerProposal)
	}
	testkit.MustContain(t, "show 1 --changes", h.mustSSH("bob", "show", "1", "--changes"), "a newer proposal exists: run 2")
	if out := h.mustSSH("bob", "show", "2", "--changes"); strings.Contains(out, "a newer proposal exists") {
		t.Errorf("show 2 --changes names a newer proposal, and there is none:\n%s", out)
	}
}

// An approver who opens the change set of a held plan the sealing key
// cannot open is told, above it, what show and the console tell them: it
// cannot be approved, and why.
func TestShowChangesSaysAHeldPlanCannotBeApproved(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", store.StatusAwaitingApproval)
	err := h.srv.Store().Update(func(tx *store.Tx) error { return tx.PutBlob("plan", "1", []byte("damaged")) })
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustContain(t, "show 1", h.mustSSH("bob", "show", "1"), "CANNOT BE APPROVED")
	testkit.MustContain(t, "show 1 --changes", h.mustSSH("bob", "show", "1", "--changes"), "CANNOT BE APPROVED: the sealing key cannot open its held plan")
}

// The change set of a drift check's kept plan says, above it, what show
// says: once a newer check superseded it, no reconcile can carry it.
func TestShowChangesSaysASupersededCheckCannotBeReconciled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	first := h.launchWait("carol", "data-free", "--check")
	if first.Check == nil || !first.Check.Kept {
		t.Fatalf("the first check kept no plan: %s %s", first.Status, first.Message)
	}
	testkit.MustContain(t, "show --changes of a kept plan", h.mustSSH("bob", "show", first.ID, "--changes"), "reconcile: can be proposed")
	second := h.launchWait("carol", "data-free", "--check")
	testkit.MustContain(t, "show --changes of a superseded check", h.mustSSH("bob", "show", first.ID, "--changes"),
		"reconcile: cannot be proposed: superseded by check "+second.ID)
}
