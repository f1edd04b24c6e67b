package scenario

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// changeSetOf is `show ID --changes --json` of run id, decoded.
func changeSetOf(t *testing.T, h *harness, id string) *planview.ChangeSet {
	t.Helper()
	var cs planview.ChangeSet
	if err := json.Unmarshal([]byte(h.mustSSH("bob", "show", id, "--changes", "--json")), &cs); err != nil {
		t.Fatalf("show %s --changes --json: %v", id, err)
	}
	return &cs
}

// sameAddresses fails the test unless cs changes exactly the addresses
// proposal p lists by action.
func sameAddresses(t *testing.T, what string, cs *planview.ChangeSet, p *store.Proposal) {
	t.Helper()
	var want, got []string
	for _, addrs := range p.Addresses {
		for _, a := range addrs {
			if !slices.Contains(want, a) {
				want = append(want, a)
			}
		}
	}
	for _, r := range cs.Resources {
		got = append(got, r.Address)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("%s's change set changes %v, and its proposal %v", what, got, want)
	}
}

// changesBody is what `show ID --changes` prints below its head (its
// first line and the indented notes under it).
func changesBody(t *testing.T, h *harness, id string) string {
	t.Helper()
	_, body, _ := strings.Cut(h.mustSSH("bob", "show", id, "--changes"), "\n")
	for strings.HasPrefix(body, "  ") {
		_, body, _ = strings.Cut(body, "\n")
	}
	return body
}

// A plan a relay worker made and handed over is measured on the control
// node like its own: the held apply's change set is there, of the same
// resources as its proposal, and opening it needs no worker.
func TestARelayedPlanHasItsChangeSetOnTheControlNode(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, `
template "rdata" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "hold-rdata" {
  templates        = ["rdata"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`)
	stop := startWorkerStoppable(t, h, keys, identity)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rdata", "--json"))
	h.waitStatus(id, store.StatusAwaitingApproval)
	v := h.show("bob", id)
	if v.PlannedBy != "w1" || v.Changes == nil {
		t.Fatalf("run %s planned by %q, change set %v", id, v.PlannedBy, v.Changes)
	}
	sameAddresses(t, "the relayed plan", changeSetOf(t, h, id), v.Proposal)
	stop()
	waitFor(t, "w1 to be gone", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "disconnected") })
	if body := changesBody(t, h, id); !strings.Contains(body, "terraform_data.server[2]") {
		t.Errorf("with no worker, show --changes says:\n%s", body)
	}
}

// startWorkerStoppable starts worker w1 of pool eu, waits for it to
// connect and returns what stops it.
func startWorkerStoppable(t *testing.T, h *harness, keys map[string]relayKey, identity string) func() {
	t.Helper()
	_, drain := startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	return drain
}

// A drift check keeps its plan's change set, and the reconcile that
// carries that plan shows its approver the very same change set.
func TestAReconcileShowsTheChangeSetItsCheckKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	check := h.launchWait("carol", "data-free", "--check")
	if check.Check == nil || check.Check.Plan == nil || !check.Check.Kept {
		t.Fatalf("the check kept no plan: %s %s", check.Status, check.Message)
	}
	checkView := h.show("bob", check.ID)
	if checkView.Changes == nil {
		t.Fatal("the check's kept plan has no change set")
	}
	sameAddresses(t, "the check", changeSetOf(t, h, check.ID), check.Check.Plan)
	kept := changesBody(t, h, check.ID)

	var rec api.RunView
	if err := json.Unmarshal([]byte(h.mustSSH("carol", "reconcile", check.ID, "--json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Proposal == nil || rec.Proposal.Digest != check.Check.Plan.Digest || rec.Changes == nil {
		t.Fatalf("the reconcile: %+v, change set %v", rec.Proposal, rec.Changes)
	}
	if got := changesBody(t, h, rec.ID); got != kept {
		t.Errorf("the reconcile shows another change set than its check's:\n%s\n---\n%s", got, kept)
	}
	if head := h.mustSSH("bob", "show", rec.ID, "--changes"); !strings.Contains(firstLine(head), rec.Proposal.Digest) {
		t.Errorf("show --changes of the reconcile does not name its digest: %q", firstLine(head))
	}
}

// show --changes refuses a run that saved no plan (an ungated apply), in
// text and JSON alike, with a sentence naming show for tofu's text.
func TestShowChangesRefusesARunWithoutASavedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	first := runIDOf(t, h.mustSSH("carol", "launch", "data-free", "--json")) // an ungated apply: no saved plan
	h.waitStatus(first, store.StatusSucceeded)
	_, errOut, code := h.ssh("bob", "show", first, "--changes")
	if code != 1 || !strings.Contains(errOut, "no change set") || !strings.Contains(errOut, "`show "+first+"`") {
		t.Errorf("show --changes of an ungated apply: exit %d %q", code, errOut)
	}
	_, jsonErr, jsonCode := h.ssh("bob", "show", first, "--changes", "--json")
	var e struct{ Error struct{ Code string } }
	if jsonCode != code || json.Unmarshal([]byte(jsonErr), &e) != nil || e.Error.Code != api.ErrConflict {
		t.Errorf("show --changes --json of an ungated apply: exit %d %q", jsonCode, jsonErr)
	}
}
