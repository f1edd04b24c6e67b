package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// ptyTerm is one console session over a real SSH connection with a
// terminal (testkit.PTYTerm).
type ptyTerm = testkit.PTYTerm

// openConsole dials the harness as user, asks for an xterm-256color PTY of
// w columns and h rows and starts a shell: the server answers with the TUI.
func openConsole(h *harness, user string, w, hgt int) *ptyTerm {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatalf("ssh %s: %v", user, err)
	}
	return testkit.OpenConsole(h.t, client, user, w, hgt)
}

// heldDestroyingTwo checks, through `show`, that run 2 is held, destroys 2
// and was launched with the launcher's instances = 1; it returns the digest.
func heldDestroyingTwo(h *harness) string {
	h.t.Helper()
	v := h.show("bob", "2")
	if store.Status(v.Status) != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Destroy != 2 {
		h.t.Fatalf("run 2 = %s, proposal %+v", v.Status, v.Proposal)
	}
	if got := v.Vars["instances"]; got != "1" {
		h.t.Fatalf("run 2 was launched with instances = %q, want 1 from the launcher's form", got)
	}
	digest := v.Proposal.Digest
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		h.t.Fatalf("digest = %q", digest)
	}
	return digest
}

// The check, end to end through real SSH connections with a
// terminal and real OpenTofu: a launcher starts a destroying apply from the
// console's launcher with a survey answer and watches its log; the approver
// sees it waiting for them, with the destroy count and the digest `show`
// reports, approves with a confirmation and watches the apply finish; the
// state then holds what the approved plan said.
func TestConsoleLaunchesAndApprovesAHeldApplyOverSSH(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "no-destroys" {
  templates   = ["data"]
  max_destroy = 0
  approvers   = ["bob"]
}
`)
	// State with 3 instances; creating destroys nothing, so it is not held.
	out := h.mustSSH("carol", "launch", "data", "--wait")
	if !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("first apply did not succeed:\n%s", out)
	}
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers, want 3", n)
	}

	// carol launches instances=1 as a real run from the launcher.
	carol := openConsole(h, "carol", 120, 40)
	carol.WaitFor(30*time.Second, "Switchtender · runs", "signed in as carol (launch)", "succeeded")
	carol.Keys("n")
	carol.WaitFor(10*time.Second, "launch a run", "data", "data-free")
	carol.Keys("\r") // the cursor starts on "data", the first template
	carol.WaitFor(10*time.Second, "Launch · data", "instances (number)", "generation (string)", "dry run (plan only)")
	// instances: to the end of the default "3", erase it, type 1; then to
	// the run kind, one step right from "dry run" to "real run", then to the
	// launch button.
	carol.Keys("\x05", "\x7f", "1", "\t", "\t")
	carol.Keys("\x1b[C")
	carol.WaitFor(10*time.Second, "real run (apply)")
	carol.Keys("\t", "\r")
	// The launcher opens the new run; its log streams, then the proposal
	// (carol may not approve it: she has no approve role).
	carol.WaitFor(time.Minute, "Run 2 · data · apply", "status: awaiting_approval", "DESTROYS 2")
	carol.Keys("\t") // from the proposal pane to the log
	carol.WaitFor(10*time.Second, "2 to destroy", "end of log")

	digest := heldDestroyingTwo(h)

	bob := openConsole(h, "bob", 120, 40)
	s := bob.WaitFor(30*time.Second, "signed in as bob (approve)", "1 run is waiting for you", "▶ YOU")
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "▶ YOU") && !strings.Contains(line, "data") {
			t.Errorf("the waiting mark is not on the data run: %q", line)
		}
	}
	// Runs are newest first: run 2 is under the cursor.
	bob.Keys("\r")
	s = bob.WaitFor(30*time.Second, "Run 2 · data · apply", "▶ waiting for you", "DESTROYS 2", "digest: "+digest,
		"held by: no-destroys → bob", "terraform_data.server[1]", "terraform_data.server[2]")
	if !strings.Contains(s, "requester: carol") {
		t.Errorf("the held apply does not say who asked:\n%s", s)
	}
	bob.Keys("a")
	s = bob.WaitFor(10*time.Second, "Release this proposal of run 2?", "y release this digest")
	if !strings.Contains(s, digest) {
		t.Fatalf("the confirmation does not show the digest being released:\n%s", s)
	}
	bob.Keys("y")
	bob.WaitFor(time.Minute, "released "+digest, "status: succeeded")

	r, err := h.db().GetRun("2")
	if err != nil {
		t.Fatal(err)
	}
	if store.Status(r.Status) != store.StatusSucceeded {
		t.Fatalf("run 2 is %s (%s)", r.Status, r.Message)
	}
	if n := h.stateCount(); n != 1 {
		t.Fatalf("after the approved apply the state holds %d servers, want 1", n)
	}
	// The launcher's console followed the same run to its end.
	carol.WaitFor(30*time.Second, "status: succeeded")
	// The run's log holds the apply of the released plan: back to the list
	// (the cursor stays on run 2), open it again, switch to the log.
	bob.Keys("\x1b")
	bob.WaitFor(10*time.Second, "Switchtender · runs")
	bob.Keys("\r")
	bob.WaitFor(10*time.Second, "Run 2 · data · apply", "[Proposal]")
	bob.Keys("\t")
	bob.WaitFor(10*time.Second, "Apply complete! Resources: 0 added, 0 changed, 2 destroyed.", "end of log")
}
