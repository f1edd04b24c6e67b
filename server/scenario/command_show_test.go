package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// showRaw is `show RUN --json` as user, decoded into a map, so a test sees
// the field names a script sees.
// show says which rules still hold a run and whom each waits for, which
// were released and by whom, the counts in tofu's words next to the
// destroy count, and "waiting for you" only to someone who can release
// something now.
func TestShowHoldsAndWhoTheyWaitFor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+twoReviewRules)
	if out := h.mustSSH("carol", "launch", "data", "--wait"); !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("not held:\n%s", out)
	}
	v := h.show("alice", "1")
	if len(v.Holds) != 2 || v.Holds[0].WaitsFor != "alice" || v.Holds[1].WaitsFor != "bob" || v.Holds[0].ReleasedBy != "" {
		t.Fatalf("holds = %+v", v.Holds)
	}
	if !v.WaitingForYou || v.Stale || v.NewerProposal != "" || v.Counts != "3 to add, 0 to change, 0 to destroy" || v.Proposal.PlanText == "" {
		t.Fatalf("view = %+v", v)
	}
	if h.show("carol", "1").WaitingForYou {
		t.Errorf("the requester, who cannot approve, is told the run waits for them")
	}
	text := h.mustSSH("carol", "show", "1")
	testkit.MustContain(t, "show 1 (carol)", text,
		"held by rule alice-reviews: ", "; waits for alice", "held by rule bob-reviews: ", "; waits for bob",
		"DESTROYS 0", "plan:    3 to add, 0 to change, 0 to destroy", "releasing exactly this plan: approve 1 --digest "+v.Proposal.Digest)
	testkit.MustLack(t, "show 1 (carol)", text, "waiting for you")
	testkit.MustContain(t, "show 1 (alice)", h.mustSSH("alice", "show", "1"), "waiting for you: releasing exactly this plan")

	// alice releases her rule; bob's still holds it.
	out := h.mustSSH("alice", "approve", "1", "--digest", v.Proposal.Digest)
	testkit.MustContain(t, "approve output", out, "run 1: awaiting_approval", "released rule alice-reviews (", ") by alice", "held by rule bob-reviews: ", "waits for bob")
	checkOneRuleReleased(t, h)
}

// checkOneRuleReleased checks run 1 once alice released her rule and bob's
// still holds it: show --json names who released which rule and whom the
// other waits for, and only bob is told the run waits for him.
func checkOneRuleReleased(t *testing.T, h *harness) {
	t.Helper()
	raw := h.showRaw("alice", "1")
	holds, _ := raw["holds"].([]any)
	if len(holds) != 2 {
		t.Fatalf("holds = %v", raw["holds"])
	}
	a, b := holds[0].(map[string]any), holds[1].(map[string]any)
	if a["rule"] != "alice-reviews" || a["released_by"] != "alice" || a["waits_for"] != nil {
		t.Errorf("released hold = %v", a)
	}
	if b["rule"] != "bob-reviews" || b["released_by"] != nil || b["waits_for"] != "bob" {
		t.Errorf("pending hold = %v", b)
	}
	if raw["stale"] != false || raw["waiting_for_you"] != false || raw["sealed_answers"] != nil || raw["sealed_vars"] != nil {
		t.Errorf("show 1 --json for alice after her release: %v", raw)
	}
	testkit.MustLack(t, "show 1 (alice, released)", h.mustSSH("alice", "show", "1"), "waiting for you")
	testkit.MustContain(t, "show 1 (bob)", h.mustSSH("bob", "show", "1"), "waiting for you: ", "released rule alice-reviews (")
	if !h.show("bob", "1").WaitingForYou {
		t.Errorf("bob, whose rule still holds the run, is not told it waits for him")
	}
}

// A held plan whose state another apply changed is shown stale before
// anyone approves (show, show --json, runs, runs --json), approving it is
// refused, an older held proposal names the newer one, and rerun makes a
// new held run with the same answers that says which run it repeats.
func TestShowStaleAndNewerProposal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.mustSSH("alice", "launch", "data", "--var", "instances=2", "--wait")
	v1 := h.show("bob", "1")
	if v1.NewerProposal != "2" || h.show("bob", "2").NewerProposal != "" {
		t.Fatalf("newer proposal of run 1 = %q", v1.NewerProposal)
	}
	testkit.MustContain(t, "show 1", h.mustSSH("bob", "show", "1"), "a newer proposal exists: run 2")

	// Another apply in the same working directory changes the state.
	h.mustSSH("alice", "launch", "data-free", "--var", "instances=5", "--wait")
	raw := h.showRaw("bob", "1")
	reason, _ := raw["stale_reason"].(string)
	if raw["stale"] != true || raw["status"] != string(store.StatusStale) || !strings.Contains(reason, "rerun 1") || raw["waiting_for_you"] != false {
		t.Fatalf("show 1 --json after the state changed: stale %v status %v reason %q", raw["stale"], raw["status"], reason)
	}
	text := h.mustSSH("bob", "show", "1")
	testkit.MustContain(t, "show 1 (stale)", text, "run 1: stale", "STALE: the state changed after this plan was made")
	testkit.MustLack(t, "show 1 (stale)", text, "waiting for you", "releasing exactly this plan")
	checkListedStale(t, h, "1")
	if _, errOut, code := h.ssh("bob", "approve", "1", "--digest", v1.Proposal.Digest); code != api.ExitRefused || !strings.Contains(errOut, "stale") {
		t.Errorf("approving a stale plan: exit %d %q", code, errOut)
	}

	out := h.mustSSH("alice", "rerun", "1", "--wait")
	testkit.MustContain(t, "rerun 1 --wait", out, "run 4 queued (apply of data)", "run 4: awaiting_approval", "a rerun of run 1")
	v4 := h.show("bob", "4")
	if v4.RerunOf != "1" || v4.Vars["instances"] != "3" || v4.Stale || !v4.WaitingForYou {
		t.Fatalf("rerun = %+v", v4)
	}
	testkit.MustContain(t, "show 4", h.mustSSH("bob", "show", "4"), "a rerun of run 1")
}

// A held plan is checked against the working directory's state when it is
// displayed, not only when a run there ends: runs shows it stale.
func TestRunsChecksStaleWhenDisplayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	r, err := h.db().GetRun("1")
	if err != nil || r.Proposal == nil {
		t.Fatalf("run 1: %v %+v", err, r)
	}
	if out := h.mustSSH("bob", "runs"); !strings.Contains(out, "▶ you") {
		t.Errorf("runs does not mark the held run for bob:\n%s", out)
	}
	if out := h.mustSSH("carol", "runs"); strings.Contains(out, "▶ you") {
		t.Errorf("runs marks a run carol cannot release:\n%s", out)
	}
	h.tofuByHand("infra/data", "init", "-input=false")
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=1")
	out := h.mustSSH("bob", "runs")
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "1 ") {
			line = l
		}
	}
	if !strings.Contains(line, " stale ") || strings.Contains(line, "▶ you") {
		t.Errorf("runs lists the held plan whose state moved on as %q:\n%s", line, out)
	}
}

// checkListedStale checks that runs --json lists run id stale and carries
// no plan text for any run.
func checkListedStale(t *testing.T, h *harness, id string) {
	t.Helper()
	var runs []map[string]any
	if err := json.Unmarshal([]byte(h.mustSSH("bob", "runs", "--json")), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r["id"] == id && (r["stale"] != true || r["status"] != string(store.StatusStale)) {
			t.Errorf("runs --json lists run %s as %v, stale %v", id, r["status"], r["stale"])
		}
		if p, _ := r["proposal"].(map[string]any); p != nil && p["plan_text"] != "" {
			t.Errorf("runs --json carries plan text for run %v", r["id"])
		}
	}
}
