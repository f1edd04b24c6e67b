package server

// A relayed apply of a saved plan ends with the sentence the control node's
// own apply ends with, naming how the plan was released.

import "testing"

// Promise (docs/gated-applies.md): a saved plan no rule held is applied as
// "the saved plan …, which no rule held", one a person released as "the
// approved plan …", whichever node carries it out. Once, a relay worker's
// apply ended "Applied the released plan …" in both cases, while show said
// no rule held it.
func TestARelayedApplyEndsNamingHowItsPlanWasReleased(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
rule "few-destroys" {
  templates   = ["rnet"]
  kinds       = ["apply"]
  max_destroy = 5
}
`)
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))

	held := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=g1", "--json"))
	h.waitStatus(held, StatusAwaitingApproval, StatusFailed)
	r, _ := h.srv.db.GetRun(held)
	if r.Status != StatusAwaitingApproval || r.Proposal == nil {
		t.Fatalf("the held plan: %s: %s", r.Status, r.Message)
	}
	h.mustSSH("bob", "approve", held, "--digest", r.Proposal.Digest)
	h.waitStatus(held, StatusSucceeded, StatusFailed, StatusStale)
	done, _ := h.srv.db.GetRun(held)
	want := "Applied the approved plan " + r.Proposal.Digest + ". It ran on relay worker w1."
	if done.Status != StatusSucceeded || done.Message != want {
		t.Errorf("the released apply: %s %q, want %q", done.Status, done.Message, want)
	}

	h.reloadReplacing("require_approval = true", "max_destroy      = 100")
	free := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=g2", "--json"))
	h.waitStatus(free, StatusSucceeded, StatusFailed, StatusStale, StatusAwaitingApproval)
	done, _ = h.srv.db.GetRun(free)
	if done.Proposal == nil {
		t.Fatalf("the apply under max_destroy planned no saved plan: %s: %s", done.Status, done.Message)
	}
	want = "Applied the saved plan " + done.Proposal.Digest + ", which no rule held. It ran on relay worker w1."
	if done.Status != StatusSucceeded || done.Message != want {
		t.Errorf("the apply no rule held: %s %q, want %q", done.Status, done.Message, want)
	}
}
