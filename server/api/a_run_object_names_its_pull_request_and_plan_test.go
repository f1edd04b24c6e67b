package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// runJSON is v marshalled as the contract's run object, decoded.
func runJSON(t *testing.T, v RunView) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A forge-launched run's object carries "pull_request" with every field,
// its differences [] when there are none (never null, never left out),
// and requester_kind "forge"; a run without one has no pull_request.
func TestARunObjectNamesItsPullRequest(t *testing.T) {
	v := RunView{}
	v.ID, v.Status, v.ExitCode = "12", store.StatusSucceeded, 0
	v.Requester, v.RequesterKind = "octocat", store.RequesterForge
	v.PullRequest = &store.PullRequest{Forge: "corp", Repository: "platform/infra", Number: 12,
		HeadSHA: strings.Repeat("1a", 20), DeliveryID: "d-1"}
	m := runJSON(t, v)
	if m["requester_kind"] != "forge" {
		t.Errorf("requester_kind = %v, want forge", m["requester_kind"])
	}
	pr, ok := m["pull_request"].(map[string]any)
	if !ok {
		t.Fatalf("no pull_request object: %v", m["pull_request"])
	}
	want := map[string]any{"forge": "corp", "repository": "platform/infra", "number": 12.0, "head_sha": strings.Repeat("1a", 20),
		"merge_sha": "", "delivery_id": "d-1", "superseded_by": "", "shown_run": "", "compared": false, "differences": []any{}}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("pull_request = %v\nwant %v", pr, want)
	}

	v.PullRequest.ShownRun, v.PullRequest.Compared, v.PullRequest.Differences = "7", true, []string{"terraform_data.a: replaced here, updated there"}
	pr = runJSON(t, v)["pull_request"].(map[string]any)
	if d := pr["differences"].([]any); len(d) != 1 || pr["shown_run"] != "7" || pr["compared"] != true {
		t.Errorf("a merge's apply's pull_request = %v", pr)
	}

	v.PullRequest, v.RequesterKind = nil, store.RequesterPerson
	m = runJSON(t, v)
	if _, ok := m["pull_request"]; ok || m["requester_kind"] != "person" {
		t.Errorf("a person's run: pull_request %v, requester_kind %v", m["pull_request"], m["requester_kind"])
	}
	if got := RequestedHow(store.Run{Requester: "octocat", RequesterKind: store.RequesterForge}); got != "octocat (forge)" {
		t.Errorf("RequestedHow of a forge run = %q", got)
	}
}

// Every run that saved a plan carries it as "plan" — a dry run's, a gated
// run's plan-stage proposal's, a drift check's kept plan's — with its
// digest and five counts; a run that saved none (an ungated apply, a
// proposal held before planning) has no plan, and the stored dry_plan is
// never written beside it.
func TestEveryRunThatSavedAPlanCarriesItAsPlan(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	proposal := &store.Proposal{Digest: d, Stage: store.StagePlan, Add: 1, Change: 2, Destroy: 3, Replace: 1, Forget: 4}
	cases := []struct {
		name string
		run  store.Run
		want map[string]any // nil: no plan
	}{
		{"a dry run", store.Run{Kind: store.KindPlan, DryPlan: &store.DryPlan{Digest: d, Add: 3, Forget: 1}},
			map[string]any{"digest": d, "add": 3.0, "change": 0.0, "destroy": 0.0, "replace": 0.0, "forget": 1.0}},
		{"a gated apply", store.Run{Kind: store.KindApply, Proposal: proposal},
			map[string]any{"digest": d, "add": 1.0, "change": 2.0, "destroy": 3.0, "replace": 1.0, "forget": 4.0}},
		{"a drift check", store.Run{Kind: store.KindCheck, Check: &store.Check{Drifted: true, Plan: proposal}},
			map[string]any{"digest": d, "add": 1.0, "change": 2.0, "destroy": 3.0, "replace": 1.0, "forget": 4.0}},
		{"a dry run that measured no plan", store.Run{Kind: store.KindPlan}, nil},
		{"an apply held before planning", store.Run{Kind: store.KindApply, Proposal: &store.Proposal{Digest: d, Stage: store.StageRequest}}, nil},
		{"a check without drift", store.Run{Kind: store.KindCheck, Check: &store.Check{}}, nil},
	}
	for _, c := range cases {
		v := RunView{Run: c.run}
		v.ID, v.Status = "1", store.StatusSucceeded
		m := runJSON(t, v)
		if _, ok := m["dry_plan"]; ok {
			t.Errorf("%s: the stored dry_plan is written: %v", c.name, m["dry_plan"])
		}
		got, ok := m["plan"].(map[string]any)
		switch {
		case c.want == nil && ok:
			t.Errorf("%s has a plan: %v", c.name, got)
		case c.want != nil && !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: plan = %v\nwant %v", c.name, m["plan"], c.want)
		}
	}
}
