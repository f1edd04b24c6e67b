package server

import (
	"context"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// Every status either is final, with nothing after it, or lists what may
// follow; a final status never changes, and an illegal move is a coded
// conflict that names both statuses.
func TestTransitionsAreGuarded(t *testing.T) {
	all := []Status{StatusQueued, StatusRunning, StatusAwaitingApproval, StatusSucceeded, StatusFailed,
		StatusCancelled, StatusInterrupted, StatusRejected, StatusRefused, StatusStale}
	for _, from := range all {
		for _, to := range all {
			err := from.To(to)
			if from.Final() && err == nil {
				t.Errorf("final %s may become %s", from, to)
			}
			if err != nil && (ErrorCode(err) != ErrConflict || !strings.Contains(UserMessage(err), string(to))) {
				t.Errorf("%s -> %s refused with %v (code %s)", from, to, err, ErrorCode(err))
			}
		}
	}
	for _, st := range []Status{StatusQueued, StatusRunning, StatusAwaitingApproval} {
		if st.Final() {
			t.Errorf("%s is final", st)
		}
	}
	if StatusQueued.To(StatusSucceeded) == nil || StatusAwaitingApproval.To(StatusRunning) == nil {
		t.Error("a run may skip running")
	}
}

// The store's check-and-set refuses a move out of a final status, and
// writes nothing.
func TestFinalStatusNeverChanges(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("alice", "launch", "data", "--dry-run", "--wait")
	before, _ := h.srv.db.GetRun("1")
	for _, to := range []Status{StatusQueued, StatusRunning, StatusFailed, StatusStale} {
		if _, err := h.srv.transition("1", to, nil); ErrorCode(err) != ErrConflict {
			t.Errorf("succeeded -> %s: %v", to, err)
		}
	}
	after, _ := h.srv.db.GetRun("1")
	if after.Status != before.Status || after.Message != before.Message || !after.FinishedAt.Equal(before.FinishedAt) {
		t.Errorf("a refused transition wrote: %+v", after)
	}
	if _, err := h.srv.transition("99", StatusFailed, nil); ErrorCode(err) != ErrNotFound {
		t.Errorf("unknown run: %v", err)
	}
}

const twoReviewRules = testkit.TwoReviewRules

// Two rules with disjoint approvers hold one apply: each is released by one
// of its own approvers, the apply runs once when neither holds it, and an
// approver neither rule names can neither approve nor reject.
func TestEachHoldingRuleReleasedByItsApprover(t *testing.T) {
	h := newHarness(t, dataTemplates+twoReviewRules)
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.srv.db.GetRun("1")
	digest := r.Proposal.Digest
	for _, who := range []string{"alice", "bob"} {
		if !h.srv.waitingFor(r, h.identity(who)) {
			t.Errorf("run 1 is not marked waiting for %s", who)
		}
	}
	if h.srv.waitingFor(r, h.identity("dave")) || h.srv.waitingFor(r, h.identity("carol")) {
		t.Error("run 1 is marked waiting for someone no holding rule names")
	}
	_, errOut, code := h.ssh("dave", "approve", "1", "--digest", digest)
	if code != 1 || !strings.Contains(errOut, "not among the approvers") || !strings.Contains(errOut, "bob-reviews waits for bob") {
		t.Errorf("dave approve: exit %d %q", code, errOut)
	}
	_, errOut, code = h.ssh("dave", "reject", "1", "--reason", "no")
	if code != 1 || !strings.Contains(errOut, "may not reject") {
		t.Errorf("dave reject: exit %d %q", code, errOut)
	}

	h.mustSSH("alice", "approve", "1", "--digest", digest)
	r, _ = h.srv.db.GetRun("1")
	if r.Status != StatusAwaitingApproval || len(pendingHolds(r)) != 1 || pendingHolds(r)[0].Rule != "bob-reviews" {
		t.Fatalf("after alice: %s, pending %+v", r.Status, pendingHolds(r))
	}
	if v := h.srv.holdViews(r); v[0].ReleasedBy != "alice" || v[1].ReleasedBy != "" || v[1].WaitsFor != "bob" {
		t.Errorf("hold views after alice: %+v", v)
	}
	if h.srv.waitingFor(r, h.identity("alice")) || !h.srv.waitingFor(r, h.identity("bob")) {
		t.Error("after alice released her rule, the mark should be bob's alone")
	}
	_, errOut, code = h.ssh("alice", "approve", "1", "--digest", digest)
	if code != 1 || !strings.Contains(errOut, "already released rule alice-reviews") {
		t.Errorf("alice twice: exit %d %q", code, errOut)
	}
	h.mustSSH("bob", "approve", "1", "--digest", digest)
	h.waitStatus("1", StatusSucceeded)
	r, _ = h.srv.db.GetRun("1")
	applies := 0
	for _, st := range r.Steps {
		if st.Name == "apply" {
			applies++
		}
	}
	if applies != 1 || h.stateCount() != 3 {
		t.Errorf("apply ran %d times; state holds %d", applies, h.stateCount())
	}
	var released []string
	for _, a := range r.Approvals {
		released = append(released, a.By+":"+strings.Join(a.Rules, ","))
	}
	if strings.Join(released, " ") != "alice:alice-reviews bob:bob-reviews" {
		t.Errorf("approvals = %v", released)
	}
}

// One approval by a person several holding rules name releases each of
// them; a reject by one holding rule's approver ends the run.
func TestOneApprovalReleasesEveryRuleNamingTheApprover(t *testing.T) {
	h := newHarness(t, dataTemplates+strings.ReplaceAll(twoReviewRules, `["bob"]`, `["bob", "alice"]`))
	h.mustSSH("carol", "launch", "data", "--wait")
	r, _ := h.srv.db.GetRun("1")
	h.mustSSH("alice", "approve", "1", "--digest", r.Proposal.Digest)
	h.waitStatus("1", StatusSucceeded)

	h.mustSSH("carol", "launch", "data", "--var", "instances=1", "--wait")
	h.mustSSH("bob", "reject", "2", "--reason", "too risky")
	if r, _ := h.srv.db.GetRun("2"); r.Status != StatusRejected || !strings.Contains(r.Message, "too risky") {
		t.Errorf("after bob's reject: %s %q", r.Status, r.Message)
	}
}

// identity is who the harness's configuration says name is.
func (h *harness) identity(name string) Identity {
	id := Identity{Name: name}
	if u := h.srv.config().Users[name]; u != nil {
		id.Roles = u.Roles
	} else {
		id.Agent = true
	}
	return id
}

const secretDataTemplate = testkit.SecretDataTemplate

// A held apply goes stale when another apply in its working directory
// changes the state: stale before anyone approves, approval refused with
// what to do, and rerun makes a new held run with the same answers, the
// secret one included, whose approval applies.
func TestStaleBeforeApprovalThenRerun(t *testing.T) {
	const canary = "Rerun-Canary-7781"
	h := newHarness(t, dataTemplates+secretDataTemplate)
	h.mustSSH("alice", "launch", "data-free", "--wait")
	h.mustSSH("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary, "--wait")
	held, _ := h.srv.db.GetRun("2")
	if held.Status != StatusAwaitingApproval {
		t.Fatalf("run 2 is %s: %s", held.Status, held.Message)
	}
	if got := h.srv.newerProposal(held); got != "" {
		t.Errorf("newer proposal before any: %q", got)
	}
	h.mustSSH("alice", "launch", "data-free", "--var", "instances=5", "--wait")

	r, _ := h.srv.db.GetRun("2")
	if r.Status != StatusStale || !r.Proposal.Stale || !strings.Contains(r.Proposal.StaleReason, "rerun 2") {
		t.Fatalf("run 2 after another apply: %s stale=%v %q", r.Status, r.Proposal.Stale, r.Proposal.StaleReason)
	}
	if _, err := h.srv.db.GetBlob(blobPlan, "2"); err == nil {
		t.Error("a stale plan's sealed blob is kept")
	}
	_, errOut, code := h.ssh("bob", "approve", "2", "--digest", held.Proposal.Digest)
	if code != 1 || !strings.Contains(errOut, "stale") || !strings.Contains(errOut, "rerun 2") {
		t.Errorf("approving a stale plan: exit %d %q", code, errOut)
	}
	if n := h.stateCount(); n != 5 {
		t.Fatalf("state holds %d, want the other apply's 5", n)
	}

	again, err := h.srv.Rerun(context.Background(), h.identity("carol"), "2")
	if err != nil {
		t.Fatal(err)
	}
	if again.RerunOf != "2" || again.Requester != "carol" || again.Answers["instances"] != "1" || again.Answers["token"] != "" {
		t.Fatalf("rerun = %+v", again)
	}
	secret, err := openSealedMap(h.srv.key, again.ID, again.SealedAnswers)
	if err != nil || secret["token"] != canary {
		t.Fatalf("rerun's sealed answers: %v %v", secret, err)
	}
	h.waitStatus(again.ID, StatusAwaitingApproval)
	r, _ = h.srv.db.GetRun(again.ID)
	if r.Proposal.Destroy != 4 {
		t.Errorf("rerun proposes destroying %d, want 4", r.Proposal.Destroy)
	}
	h.mustSSH("bob", "approve", again.ID, "--digest", r.Proposal.Digest)
	h.waitStatus(again.ID, StatusSucceeded)
	if n := h.stateCount(); n != 1 {
		t.Errorf("after the rerun's apply: %d servers, want 1", n)
	}
	for _, id := range []string{"2", again.ID} {
		if log := h.mustSSH("bob", "log", id); strings.Contains(log, canary) {
			t.Errorf("run %s's log holds the secret answer", id)
		}
	}
}

// Rerun is refused for a run that has not ended, and for a run whose
// template's survey changed incompatibly, naming the field.
func TestRerunRefusedForOpenRunsAndChangedSurveys(t *testing.T) {
	h := newHarness(t, dataTemplates+secretDataTemplate)
	h.mustSSH("alice", "launch", "data-free", "--wait")
	h.mustSSH("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token=abcdef", "--wait")
	if _, err := h.srv.Rerun(context.Background(), h.identity("alice"), "2"); ErrorCode(err) != ErrConflict {
		t.Errorf("rerun of a held run: %v", err)
	}
	h.mustSSH("bob", "reject", "2")
	if _, err := h.srv.Rerun(context.Background(), h.identity("bob"), "2"); ErrorCode(err) != ErrForbidden {
		t.Errorf("rerun by someone who may not launch: %v", err)
	}
	if _, err := h.srv.Rerun(context.Background(), h.identity("alice"), "7"); ErrorCode(err) != ErrNotFound {
		t.Errorf("rerun of no run: %v", err)
	}
	// The survey changes: instances becomes a choice that lacks "1".
	tmpl := h.srv.config().Templates["data-secret"]
	f := *tmpl.Survey[0]
	f.Type, f.Choices = "choice", []string{"2", "3"}
	tmpl.Survey[0] = &f
	_, err := h.srv.Rerun(context.Background(), h.identity("alice"), "2")
	var e *Error
	if !asError(err, &e) || e.Field != "instances" || !strings.Contains(e.Msg, "changed") {
		t.Errorf("rerun after the survey changed: %v", err)
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

// A held proposal with a newer held or applied proposal for the same
// working directory names the newer run.
func TestNewerProposal(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--var", "instances=1", "--wait")
	h.mustSSH("alice", "launch", "data", "--var", "instances=2", "--wait")
	h.mustSSH("alice", "launch", "data", "--dry-run", "--wait")
	older, _ := h.srv.db.GetRun("1")
	newer, _ := h.srv.db.GetRun("2")
	if got := h.srv.newerProposal(older); got != "2" {
		t.Errorf("newer proposal of run 1 = %q, want 2", got)
	}
	if got := h.srv.newerProposal(newer); got != "" {
		t.Errorf("newer proposal of run 2 = %q, want none", got)
	}
}
