package scenario

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
)

// holdRnetForAliceOrBob holds every apply of rnet for alice or bob.
const holdRnetForAliceOrBob = `
rule "hold-rnet-ab" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["alice", "bob"]
}
`

// heldRelayRun launches rnet as who on pool eu and waits for its plan's
// proposal; it returns the run and the digest to approve.
func heldRelayRun(t *testing.T, h *harness, who, region string) (string, string) {
	t.Helper()
	id := runIDOf(t, h.mustSSH(who, "launch", "rnet", "--var", "region="+region, "--json"))
	if who == "deploy-bot" { // an agent's apply is held before it plans; bob releases that
		r, _ := h.db().GetRun(id)
		if r.Proposal == nil {
			t.Fatalf("the agent's apply was not held: %s %s", r.Status, r.Message)
		}
		h.mustSSH("bob", "approve", id, "--digest", r.Proposal.Digest)
	}
	var digest string
	waitFor(t, "run "+id+"'s plan proposal", 60*time.Second, func() bool {
		r, _ := h.db().GetRun(id)
		if r.Status == store.StatusFailed {
			t.Fatalf("run %s failed: %s", id, r.Message)
		}
		if r.Status == store.StatusAwaitingApproval && r.Proposal != nil && r.Proposal.Stage == store.StagePlan {
			digest = r.Proposal.Digest
			return true
		}
		return false
	})
	return id, digest
}

// A person who launched a gated relay apply cannot approve it
// (allow_self_approval off), a person can approve an agent's, and with
// allow_self_approval set the requester can approve their own: the server
// block is read at start, so a reload leaves it off and a restart sets it.
func TestARequesterApprovesTheirOwnRelayApplyOnlyWithSelfApproval(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, holdRnetForAliceOrBob)
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	own, digest := heldRelayRun(t, h, "alice", "self1")
	if _, errOut, code := h.ssh("alice", "approve", own, "--digest", digest); code == 0 || !strings.Contains(errOut, "cannot approve it") {
		t.Fatalf("alice approving her own relay apply: exit %d %q", code, errOut)
	}
	bot, botDigest := heldRelayRun(t, h, "deploy-bot", "self2")
	if _, errOut, code := h.ssh("alice", "approve", bot, "--digest", botDigest); code != 0 {
		t.Fatalf("alice approving the agent's relay apply: exit %d %q", code, errOut)
	}
	h.waitStatus(bot, store.StatusSucceeded, store.StatusFailed, store.StatusStale)
	b, err := os.ReadFile(h.cfgPath)
	if err != nil || !strings.Contains(string(b), "cancel_grace = \"5s\"\n") {
		t.Fatalf("the configuration's server block: %v", err)
	}
	if err := os.WriteFile(h.cfgPath, []byte(strings.Replace(string(b), "cancel_grace = \"5s\"\n", "cancel_grace = \"5s\"\n  allow_self_approval = true\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	h.reloadWith("")
	if _, _, code := h.ssh("alice", "approve", own, "--digest", digest); code == 0 {
		t.Fatalf("a reload applied the server block's allow_self_approval, which is read at start")
	}
	h.restart()
	if _, errOut, code := h.ssh("alice", "approve", own, "--digest", digest); code != 0 {
		t.Fatalf("alice approving her own relay apply with allow_self_approval: exit %d %q", code, errOut)
	}
	if r, _ := h.db().GetRun(own); r.Status == store.StatusAwaitingApproval || len(r.Approvals) == 0 {
		t.Errorf("after alice's own approval: %s, approvals %+v", r.Status, r.Approvals)
	}
}
