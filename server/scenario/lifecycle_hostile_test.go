package scenario

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
)

// A dry run an approval rule holds before planning is released with words
// that say nothing is applied. Once, its release said "The apply its plan
// proposes is held again", words that mislead in an approval tool.
func TestADryRunsReleaseSaysNothingIsApplied(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	h.waitStatus("1", store.StatusAwaitingApproval)
	r, _ := h.db().GetRun("1")
	out := h.mustSSH("alice", "approve", "1", "--digest", r.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded, store.StatusFailed)
	if strings.Contains(out, "apply its plan proposes is held again") {
		t.Errorf("releasing a dry run says an apply will be held again:\n%s", out)
	}
}

// README: "a missing required answer (a field with no default; an empty
// string is no answer) ... is refused before the run is queued". A required
// list given as the empty string is refused as no answer. Once, it was taken
// as an empty list.
func TestAnEmptyRequiredListIsNoAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "zones" {
  project = "infra"
  command = "infra/data"
  survey "zones" {
    type = "list"
  }
}
`)
	_, errOut, code := h.ssh("alice", "launch", "zones", "--dry-run", "--var", "zones=")
	if code == 0 {
		t.Errorf("launch with a required list answered by the empty string was queued")
	}
	t.Logf("exit %d %s", code, errOut)
}

// Two approvers whose rules both must release, approving at the same
// instant, many times over: the apply runs exactly once. Also a single
// rule naming nobody, approved at once by two people: one release, one
// refusal.
func TestConcurrentApprovalsApplyOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+twoReviewRules)
	h.mustSSH("carol", "launch", "data", "--var", "instances=2", "--wait")
	r, _ := h.db().GetRun("1")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i, who := range []string{"alice", "bob", "alice", "bob", "alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.srv.Approve(context.Background(), h.identity(who), "1", r.Proposal.Digest)
		}()
	}
	wg.Wait()
	ok := 0
	for _, e := range errs {
		if e == nil {
			ok++
		}
	}
	h.waitStatus("1", store.StatusSucceeded, store.StatusFailed, store.StatusStale)
	r, _ = h.db().GetRun("1")
	applies := 0
	for _, st := range r.Steps {
		if st.Name == "apply" {
			applies++
		}
	}
	if ok != 2 || applies != 1 || r.Status != store.StatusSucceeded || len(r.Approvals) != 2 {
		t.Errorf("concurrent approvals: %d accepted (want 2), %d applies, %s, approvals %+v, errs %v", ok, applies, r.Status, r.Approvals, errs)
	}
}

// Cancelling at every status: final ones refused, cancel twice refused,
// approve/reject/cancel of an ended run never changes it.
func TestNothingChangesAFinalRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.db().GetRun("1")
	h.mustSSH("carol", "cancel", "1")
	before, _ := h.db().GetRun("1")
	for _, cmd := range [][]string{
		{"carol", "cancel", "1"},
		{"alice", "approve", "1", "--digest", r.Proposal.Digest},
		{"alice", "reject", "1"},
		{"bob", "cancel", "1"},
	} {
		_, errOut, code := h.ssh(cmd[0], cmd[1:]...)
		if code != 1 {
			t.Errorf("%v on a cancelled run: exit %d %q", cmd, code, errOut)
		}
	}
	after, _ := h.db().GetRun("1")
	if after.Status != before.Status || after.Message != before.Message || len(after.Approvals) != len(before.Approvals) {
		t.Errorf("a cancelled run changed: %+v -> %+v", before, after)
	}
}

// Two held proposals for one directory: the older says a newer exists in
// show and the console; approving the older applies it and the newer goes
// stale at once, before anyone approves it, and says so.
func TestApprovingTheOlderProposalMakesTheNewerStale(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--var", "instances=1", "--wait")
	h.mustSSH("carol", "launch", "data", "--var", "instances=2", "--wait")
	if out := h.mustSSH("alice", "show", "1"); !strings.Contains(out, "a newer proposal exists: run 2") {
		t.Errorf("show 1 lacks the newer proposal:\n%s", out)
	}
	if d := consoleRun(t, consoleAs(h, h.identity("alice")), "1"); d.Proposal == nil || d.Proposal.NewerRun != "2" {
		t.Errorf("console run 1: %+v", d.Proposal)
	}
	r1, _ := h.db().GetRun("1")
	h.mustSSH("alice", "approve", "1", "--digest", r1.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
	r2, _ := h.db().GetRun("2")
	if r2.Status != store.StatusStale || !r2.Proposal.Stale {
		t.Errorf("run 2 after run 1 applied: %s stale=%v", r2.Status, r2.Proposal.Stale)
	}
	v := h.show("bob", "2")
	if !v.Stale || v.WaitingForYou {
		t.Errorf("show 2: stale=%v waiting=%v", v.Stale, v.WaitingForYou)
	}
}

// An agent's apply under two rules: a request-stage hold, then three
// plan-stage holds; the request digest does not release the plan; alice
// releases agent and alice-reviews at once, bob his; the apply runs once.
func TestAnAgentsApplyUnderTwoRulesRunsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+twoReviewRules)
	h.mustSSH("deploy-bot", "launch", "data")
	h.waitStatus("1", store.StatusAwaitingApproval)
	req, _ := h.db().GetRun("1")
	if _, _, code := h.ssh("deploy-bot", "approve", "1", "--digest", req.Proposal.Digest); code != 1 {
		t.Errorf("the agent approved its own request")
	}
	h.mustSSH("dave", "approve", "1", "--digest", req.Proposal.Digest)
	h.waitStatus("1", store.StatusAwaitingApproval, store.StatusFailed)
	deadline := time.Now().Add(time.Minute)
	var r store.Run
	for {
		r, _ = h.db().GetRun("1")
		if r.Proposal != nil && r.Proposal.Stage == store.StagePlan && r.Status == store.StatusAwaitingApproval {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never held at the plan stage: %s %+v", r.Status, r.Proposal)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, errOut, code := h.ssh("alice", "approve", "1", "--digest", req.Proposal.Digest); code != 1 {
		t.Errorf("the request digest released the plan stage: %q", errOut)
	}
	if _, errOut, code := h.ssh("dave", "approve", "1", "--digest", r.Proposal.Digest); code != 0 {
		t.Logf("dave at plan stage (releases the agent hold only): exit %d %q", code, errOut)
	}
	h.mustSSH("alice", "approve", "1", "--digest", r.Proposal.Digest)
	if r, _ := h.db().GetRun("1"); r.Status != store.StatusAwaitingApproval {
		t.Fatalf("released before bob: %s", r.Status)
	}
	h.mustSSH("bob", "approve", "1", "--digest", r.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded, store.StatusFailed)
	r, _ = h.db().GetRun("1")
	var released []string
	for _, a := range r.Approvals {
		released = append(released, string(a.Stage)+":"+a.By+":"+strings.Join(a.Rules, ","))
	}
	t.Logf("approvals: %v", released)
	if r.Status != store.StatusSucceeded || h.stateCount() != 3 {
		t.Errorf("run 1: %s, state %d", r.Status, h.stateCount())
	}
}

// The spec: "A reject by one of any holding rule's approvers ends the run;
// others are refused". Once alice released her rule, only bob's rule still
// holds the run (show lists hers as released; approve and the "waiting for
// you" mark treat it as no longer holding), and alice's reject is refused.
// Once, it was accepted and ended the run bob was about to release.
func TestOnlyAPendingRulesApproverMayReject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+twoReviewRules)
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.db().GetRun("1")
	h.mustSSH("alice", "approve", "1", "--digest", r.Proposal.Digest)
	if v := h.show("alice", "1"); len(v.Holds) != 2 || v.Holds[0].ReleasedBy != "alice" || v.Holds[1].WaitsFor != "bob" {
		t.Fatalf("holds after alice: %+v", v.Holds)
	}
	_, errOut, code := h.ssh("alice", "reject", "1", "--reason", "changed my mind")
	if code == 0 {
		r, _ = h.db().GetRun("1")
		t.Errorf("alice, whose rule no longer holds run 1, rejected it: %s (%s)", r.Status, r.Message)
	}
	t.Logf("alice reject: exit %d %q", code, errOut)
}
