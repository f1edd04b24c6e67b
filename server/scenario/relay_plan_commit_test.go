package scenario

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// heldOnW1AtCommit starts worker w1 of pool eu in a git checkout, has it
// plan a gated apply of rnet held for bob, and returns the run held, the
// commit it was planned at and the checkout's git.
func heldOnW1AtCommit(t *testing.T) (*harness, api.RunView, string, func(args ...string) string) {
	t.Helper()
	h, keys, identity := relayHarness(t, holdRnetForBob)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	planned := gitCommitAll(t, checkout)
	startWorker(t, w1)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=c1", "--json"))
	h.waitStatus(id, store.StatusAwaitingApproval, store.StatusFailed)
	var held api.RunView
	if err := json.Unmarshal([]byte(h.mustSSH("alice", "show", id, "--json")), &held); err != nil || held.Status != store.StatusAwaitingApproval || held.Proposal == nil {
		t.Fatalf("the gated plan: %v %+v", err, held)
	}
	return h, held, planned, testkit.GitIn(t, checkout)
}

// namesCommit fails t unless run id's show and JSON name commit sha.
func namesCommit(t *testing.T, h *harness, id, sha, when string) {
	t.Helper()
	if show := h.mustSSH("alice", "show", id); !strings.Contains(show, "commit "+sha) {
		t.Errorf("%s, show does not name commit %s:\n%s", when, sha, show)
	}
	var v api.RunView
	if err := json.Unmarshal([]byte(h.mustSSH("alice", "show", id, "--json")), &v); err != nil || v.Commit == nil || v.Commit.SHA != sha {
		t.Errorf("%s, the JSON's commit is %+v (%v), want %s", when, v.Commit, err, sha)
	}
}

// Once, a held relay apply named no commit: the gated plan's worker hands
// its plan over and sends no result, and only a result carried the
// commit. A held apply's show now names the commit it was planned at.
func TestAHeldRelayApplyNamesTheCommitItWasPlannedAt(t *testing.T) {
	t.Parallel()
	h, held, planned, _ := heldOnW1AtCommit(t)
	namesCommit(t, h, held.ID, planned, "held")
}

// Once, a relay apply's result recorded the commit the applying worker's
// checkout was at, over the commit its plan was made at. After the apply
// the run still names the plan's commit.
func TestARelayApplyKeepsTheCommitItsPlanWasMadeAt(t *testing.T) {
	t.Parallel()
	h, held, planned, git := heldOnW1AtCommit(t)
	testkit.WriteFile(t, filepath.Join(git("rev-parse", "--show-toplevel"), "NOTES.md"), "outside the working directory\n")
	git("add", "NOTES.md")
	git("commit", "-q", "-m", "a note")
	h.mustSSH("bob", "approve", held.ID, "--digest", held.Proposal.Digest)
	h.waitStatus(held.ID, store.StatusSucceeded, store.StatusFailed, store.StatusStale, store.StatusRefused)
	if r, _ := h.db().GetRun(held.ID); r.Status != store.StatusSucceeded {
		t.Fatalf("the apply: %s: %s", r.Status, r.Message)
	}
	namesCommit(t, h, held.ID, planned, "after the apply")
}

// Once, a relay apply refused for a changed configuration recorded the
// commit it found the checkout at. It refuses, and the run still names the
// plan's commit.
func TestARelayApplyRefusedForAChangedConfigurationKeepsThePlansCommit(t *testing.T) {
	t.Parallel()
	h, held, planned, git := heldOnW1AtCommit(t)
	testkit.WriteFile(t, filepath.Join(git("rev-parse", "--show-toplevel"), "infra/network/extra.tf"), "locals {\n  extra = 1\n}\n")
	git("add", "infra/network/extra.tf")
	git("commit", "-q", "-m", "a change to the configuration")
	h.mustSSH("bob", "approve", held.ID, "--digest", held.Proposal.Digest)
	h.waitStatus(held.ID, store.StatusSucceeded, store.StatusFailed, store.StatusStale, store.StatusRefused)
	r, _ := h.db().GetRun(held.ID)
	if r.Status == store.StatusSucceeded || !strings.Contains(r.Message, "extra.tf") {
		t.Fatalf("an apply whose configuration changed: %s: %s", r.Status, r.Message)
	}
	namesCommit(t, h, held.ID, planned, "after the refused apply")
}
