package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/tui"
)

// consoleAs is the console's Backend for who, as one SSH session gets it.
func consoleAs(h *harness, who Identity) *console {
	return newConsole(h.srv, who)
}

// consoleRun is run id's detail as c shows it; it fails the test on error.
func consoleRun(t *testing.T, c *console, id string) tui.RunDetail {
	t.Helper()
	d, err := c.Run(context.Background(), id)
	if err != nil {
		t.Fatalf("console Run(%s) as %s: %v", id, c.Identity().Name, err)
	}
	return d
}

// waitingInList reports whether run id carries the "waiting for you" mark
// in c's run list.
func waitingInList(t *testing.T, c *console, id string) bool {
	t.Helper()
	runs, err := c.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			return r.WaitingForMe
		}
	}
	t.Fatalf("run %s is not in %s's list", id, c.Identity().Name)
	return false
}

// refused fails the test unless err is a refusal whose sentence contains
// want ("" for any refusal).
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want a refusal saying %q", what, err, want)
	}
}

// succeeded waits for run id to end and fails the test unless it succeeded.
func succeeded(h *harness, id string) {
	h.t.Helper()
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusStale)
	if r, _ := h.srv.db.GetRun(id); Status(r.Status) != StatusSucceeded {
		h.t.Fatalf("run %s is %s: %s", id, r.Status, r.Message)
	}
}

// releasedByRule maps each rule holding d's proposal to who released it ("" while
// it holds) and its approvers.
func releasedByRule(d tui.RunDetail) (released map[string]string, approvers map[string]string) {
	released, approvers = map[string]string{}, map[string]string{}
	if d.Proposal == nil {
		return released, approvers
	}
	for _, h := range d.Proposal.Holds {
		released[h.Rule], approvers[h.Rule] = h.ReleasedBy, strings.Join(h.Approvers, ",")
	}
	return released, approvers
}

// noApprovalByOutsider checks that dave, with the approve role but named by
// no rule holding run 1, is not marked as awaited and can neither approve
// nor reject it, and that his attempts change nothing.
func noApprovalByOutsider(t *testing.T, h *harness, dave *console, digest string) {
	t.Helper()
	ctx := context.Background()
	if consoleRun(t, dave, "1").WaitingForMe || waitingInList(t, dave, "1") {
		t.Error("run 1 is marked waiting for dave, whom no rule names")
	}
	refused(t, "dave approves", dave.Approve(ctx, "1", digest), "not among the approvers")
	refused(t, "dave rejects", dave.Reject(ctx, "1", "not mine to judge"), "may not reject")
	if r, _ := h.srv.db.GetRun("1"); Status(r.Status) != StatusAwaitingApproval || len(r.Approvals) != 0 {
		t.Fatalf("dave's refused actions changed run 1: %s, approvals %+v", r.Status, r.Approvals)
	}
}

// heldByBothRules checks that d is held by both review rules, neither
// released, each naming its approver, and returns the held digest.
func heldByBothRules(t *testing.T, d tui.RunDetail) string {
	t.Helper()
	if d.Proposal == nil || d.Status != string(StatusAwaitingApproval) {
		t.Fatalf("run 1 = %s, proposal %+v", d.Status, d.Proposal)
	}
	released, approvers := releasedByRule(d)
	if fmt.Sprint(approvers) != "map[alice-reviews:alice bob-reviews:bob]" || fmt.Sprint(released) != "map[alice-reviews: bob-reviews:]" {
		t.Fatalf("holds %+v", d.Proposal.Holds)
	}
	return d.Proposal.Digest
}

// Two rules with disjoint approvers hold one apply. In the console, a user
// with the approve role whom neither rule names can neither approve nor
// reject; alice releases her rule (the run still waits for bob's, and the
// console says so per rule); bob releases his and the apply runs once.
func TestConsoleApprovalsByRule(t *testing.T) {
	h := newHarness(t, dataTemplates+twoReviewRules)
	h.mustSSH("carol", "launch", "data", "--wait")
	h.waitStatus("1", StatusAwaitingApproval)
	ctx := context.Background()
	alice := consoleAs(h, Identity{Name: "alice", Roles: []string{"launch", "approve"}})
	bob := consoleAs(h, Identity{Name: "bob", Roles: []string{"approve"}})
	dave := consoleAs(h, Identity{Name: "dave", Roles: []string{"approve"}})

	digest := heldByBothRules(t, consoleRun(t, dave, "1"))

	noApprovalByOutsider(t, h, dave, digest)

	// alice releases her rule; bob's still holds the run.
	if !waitingInList(t, alice, "1") || !waitingInList(t, bob, "1") {
		t.Fatal("run 1 is not marked waiting for both rules' approvers")
	}
	if err := alice.Approve(ctx, "1", digest); err != nil {
		t.Fatalf("alice's release: %v", err)
	}
	d := consoleRun(t, alice, "1")
	if d.Status != string(StatusAwaitingApproval) || d.WaitingForMe {
		t.Fatalf("after alice's release run 1 is %s, waiting for alice %v", d.Status, d.WaitingForMe)
	}
	if released, _ := releasedByRule(d); fmt.Sprint(released) != "map[alice-reviews:alice bob-reviews:]" {
		t.Fatalf("holds after alice's release: %+v", d.Proposal.Holds)
	}
	refused(t, "alice releases twice", alice.Approve(ctx, "1", digest), "already released")
	refused(t, "dave approves after alice", dave.Approve(ctx, "1", digest), "not among the approvers")

	// bob releases his rule: the apply runs, once.
	if !waitingInList(t, bob, "1") {
		t.Fatal("run 1 is not marked waiting for bob")
	}
	if err := bob.Approve(ctx, "1", digest); err != nil {
		t.Fatalf("bob's release: %v", err)
	}
	succeeded(h, "1")
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers, want 3", n)
	}
	if released, _ := releasedByRule(consoleRun(t, bob, "1")); fmt.Sprint(released) != "map[alice-reviews:alice bob-reviews:bob]" {
		t.Errorf("the succeeded run's holds: %v", released)
	}
}

// A held apply goes stale when another apply changes the state: the console
// shows it stale (list and detail) with the reason, refuses to approve it,
// names the newer proposal once there is one, and its rerun makes a new
// held run whose approval applies.
func TestConsoleStaleProposalAndRerun(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--wait")
	h.waitStatus("1", StatusAwaitingApproval)
	ctx := context.Background()
	bob := consoleAs(h, Identity{Name: "bob", Roles: []string{"approve"}})
	carol := consoleAs(h, Identity{Name: "carol", Roles: []string{"launch"}})
	digest := consoleRun(t, bob, "1").Proposal.Digest

	h.mustSSH("alice", "launch", "data-free", "--var", "instances=2", "--wait")
	h.waitStatus("2", StatusSucceeded)

	if waitingInList(t, bob, "1") {
		t.Error("the stale run 1 is marked waiting for bob")
	}
	d := consoleRun(t, bob, "1")
	if !d.Stale || d.Proposal == nil || !d.Proposal.Stale || !strings.Contains(d.Proposal.StaleReason, "state changed") {
		t.Fatalf("run 1 is %s, proposal %+v", d.Status, d.Proposal)
	}
	refused(t, "approving a stale plan", bob.Approve(ctx, "1", digest), "")

	id, err := carol.Rerun(ctx, "1")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	h.waitStatus(id, StatusAwaitingApproval)
	if newer := consoleRun(t, bob, "1").Proposal.NewerRun; newer != id {
		t.Errorf("run 1 names newer proposal %q, want run %s", newer, id)
	}
	d = consoleRun(t, bob, id)
	if d.Proposal == nil || d.Proposal.Stale || !d.WaitingForMe {
		t.Fatalf("rerun %s = %s, proposal %+v, waiting %v", id, d.Status, d.Proposal, d.WaitingForMe)
	}
	if err := bob.Approve(ctx, id, d.Proposal.Digest); err != nil {
		t.Fatalf("approving the rerun: %v", err)
	}
	succeeded(h, id)
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers after the rerun, want 3", n)
	}
	refused(t, "rerun of a missing run", func() error { _, err := carol.Rerun(ctx, "404"); return err }(), "no run")
}

// The stale mark in the console's run list comes from the server.
func TestConsoleRunListMarksStale(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("carol", "launch", "data", "--wait")
	h.mustSSH("alice", "launch", "data-free", "--var", "instances=2", "--wait")
	h.waitStatus("1", StatusStale)
	runs, err := consoleAs(h, Identity{Name: "bob", Roles: []string{"approve"}}).Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if (r.ID == "1") != r.Stale {
			t.Errorf("run %s (%s): stale %v", r.ID, r.Status, r.Stale)
		}
	}
}

// gatedTemplate has survey fields without defaults: a string and a bool.
const gatedTemplate = `
template "gated" {
  project = "infra"
  command = "infra/data"
  survey "ticket" {
    type = "string"
  }
  survey "confirm" {
    type = "bool"
  }
  survey "instances" {
    type    = "number"
    default = 3
  }
}
`

// The console's CheckLaunch is the server's: a required field left out or
// answered "" is a *tui.FieldError naming it, with the sentence the SSH
// launch command prints.
func TestConsoleCheckLaunchIsTheServersValidation(t *testing.T) {
	h := newHarness(t, gatedTemplate)
	carol := consoleAs(h, Identity{Name: "carol", Roles: []string{"launch"}})
	ctx := context.Background()
	_, sshErr, code := h.ssh("carol", "launch", "gated", "--var", "confirm=true")
	if code == 0 {
		t.Fatal("ssh launch without ticket was not refused")
	}
	for _, c := range []struct {
		answers map[string]string
		field   string
	}{
		{map[string]string{"confirm": "true"}, "ticket"},
		{map[string]string{"ticket": "", "confirm": "true"}, "ticket"},
		{map[string]string{"ticket": "CHG-1"}, "confirm"},
		{map[string]string{"ticket": "CHG-1", "confirm": "maybe"}, "confirm"},
		{map[string]string{"ticket": "CHG-1", "confirm": "true", "nope": "1"}, "nope"},
	} {
		req := tui.LaunchRequest{Template: "gated", Kind: "plan", Answers: c.answers}
		err := carol.CheckLaunch(ctx, req)
		var fe *tui.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("CheckLaunch(%v) = %#v, want a field error at %s", c.answers, err, c.field)
			continue
		}
		if _, lerr := carol.Launch(ctx, req); !errors.As(lerr, &fe) || fe.Field != c.field {
			t.Errorf("Launch(%v) = %v, want a field error at %s", c.answers, lerr, c.field)
		}
	}
	err := carol.CheckLaunch(ctx, tui.LaunchRequest{Template: "gated", Answers: map[string]string{"confirm": "true"}})
	if !strings.Contains(sshErr, err.Error()) {
		t.Errorf("the console and ssh launch disagree:\nconsole: %s\nssh: %s", err, sshErr)
	}
	if err := carol.CheckLaunch(ctx, tui.LaunchRequest{Template: "gated", Kind: "plan",
		Answers: map[string]string{"ticket": "CHG-1", "confirm": "false"}}); err != nil {
		t.Errorf("a complete launch was refused: %v", err)
	}
	var fe *tui.FieldError
	bob := consoleAs(h, Identity{Name: "bob", Roles: []string{"approve"}})
	if err := bob.CheckLaunch(ctx, tui.LaunchRequest{Template: "gated", Answers: map[string]string{"ticket": "x", "confirm": "true"}}); err == nil || errors.As(err, &fe) {
		t.Errorf("bob, without the launch role: %v", err)
	}
	if runs, _ := h.srv.db.ListRuns(); len(runs) != 0 {
		t.Fatalf("refused launches queued %d runs", len(runs))
	}
}

// The check through a real SSH PTY: in the console's launcher a
// required bool has no preselected value, and launching with required
// fields untouched is refused at the field, with nothing queued; once each
// is answered the run launches with exactly those answers.
func TestConsoleLauncherRefusesUntouchedRequiredFieldsOverSSH(t *testing.T) {
	h := newHarness(t, gatedTemplate)
	carol := openConsole(h, "carol", 120, 40)
	carol.waitFor(30*time.Second, "Switchtender · runs", "signed in as carol (launch)")
	carol.keys("n")
	carol.waitFor(10*time.Second, "launch a run", "gated")
	carol.keys("\r")
	s := carol.waitFor(10*time.Second, "Launch · gated", "ticket (string, required)", "confirm (bool, required)",
		"no value: ←/→ to choose", "instances (number)")
	for _, bad := range []string{"‹ true ›", "‹ false ›"} {
		if strings.Contains(s, bad) {
			t.Fatalf("the required bool opens preselected (%s):\n%s", bad, s)
		}
	}
	// Straight to the launch button (shift+tab wraps) and launch.
	carol.keys("\x1b[Z", "\r")
	carol.waitFor(10*time.Second, `✗ survey field "ticket" of template "gated" needs an answer`, "launch refused: ticket needs fixing")
	if runs, _ := h.srv.db.ListRuns(); len(runs) != 0 {
		t.Fatalf("an untouched required field launched %d runs", len(runs))
	}
	// The focus is on ticket: answer it, launch again: the bool is next.
	carol.keys("C", "H", "G", "-", "1", "\x1b[Z", "\r")
	carol.waitFor(10*time.Second, `✗ survey field "confirm" of template "gated" needs an answer`, "launch refused: confirm needs fixing")
	if runs, _ := h.srv.db.ListRuns(); len(runs) != 0 {
		t.Fatalf("an unselected required bool launched %d runs", len(runs))
	}
	// The focus is on confirm: choose false (left from no value), then on
	// past instances and the run kind to the launch button.
	carol.keys("\x1b[D")
	carol.waitFor(10*time.Second, "‹ false ›")
	carol.keys("\t", "\t", "\t", "\r")
	carol.waitFor(time.Minute, "Run 1 · gated · plan")
	r, err := h.srv.db.GetRun("1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ticket": "CHG-1", "confirm": "false", "instances": "3"}
	for k, v := range want {
		if r.Answers[k] != v {
			t.Errorf("run 1 answer %s = %q, want %q (answers %v)", k, r.Answers[k], v, r.Answers)
		}
	}
	h.waitStatus("1", StatusSucceeded, StatusFailed)
}
