package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchtender/switchtender/planview"
)

// largeChangeSet is a change set of n updated resources, each with a
// plain and a sensitive attribute change, as a large plan's would be.
func largeChangeSet(n int) *planview.ChangeSet {
	cs := &planview.ChangeSet{FormatVersion: "1.2", Counts: planview.Counts{Update: n}}
	for i := range n {
		cs.Resources = append(cs.Resources, planview.Resource{
			Section: planview.SectionUpdate, Address: fmt.Sprintf("module.fleet.terraform_data.server[%d]", i), Actions: []string{"update"},
			Attributes: []planview.Attribute{
				{Path: "input", Before: fmt.Sprintf(`"server-%d-blue"`, i), After: fmt.Sprintf(`"server-%d-green"`, i)},
				{Path: "triggers_replace", Sensitive: true, Changed: true, BeforeFingerprint: fmt.Sprintf("%064x", i), AfterFingerprint: fmt.Sprintf("%064x", i+n)},
			},
			Unchanged: 3,
		})
	}
	return cs
}

// A held plan of 10,000 changes opens in the console within a fifth of a
// second even from a cold start (its change set read once from the store
// and decoded), and every later refresh gets the very change set already
// decoded, reading and decoding nothing again.
func TestALargeChangeSetOpensInTheConsoleOnceDecoded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--var", "instances=1")
	h.waitStatus("1", StatusAwaitingApproval)
	r, err := h.srv.db.GetRun("1")
	if err != nil || r.Proposal == nil {
		t.Fatalf("run 1: %v, proposal %v", err, r.Proposal)
	}
	const n = 10000
	if _, err := h.srv.storeProposal("1", r.Proposal, largeChangeSet(n), nil); err != nil {
		t.Fatal(err)
	}
	h.restart() // nothing decoded in memory
	bob := consoleAs(h, Identity{Name: "bob", Roles: []string{"approve"}})
	start := time.Now()
	first := consoleRun(t, bob, "1")
	took := time.Since(start)
	if first.Proposal == nil || first.Proposal.Changes == nil || len(first.Proposal.Changes.Resources) != n {
		t.Fatalf("the console's proposal does not carry the %d changes", n)
	}
	t.Logf("a cold open of %d changes took %v", n, took)
	if took > 200*time.Millisecond {
		t.Errorf("the console opened a held plan of %d changes in %v, over 0.2 s", n, took)
	}
	for range 3 {
		if again := consoleRun(t, bob, "1"); again.Proposal.Changes != first.Proposal.Changes {
			t.Fatal("a refresh decoded the change set again")
		}
	}
	if err := h.srv.db.DeleteBlob(blobChanges, "1"); err != nil {
		t.Fatal(err)
	}
	if again := consoleRun(t, bob, "1"); again.Proposal.Changes != first.Proposal.Changes {
		t.Error("a refresh read the store again for a change set already decoded")
	}
}
