package server

import (
	"context"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// The console's detail of a dry run carries its plan as a held apply's
// proposal pane does — the digest and counts it recorded and its change
// set, marked a dry run's — and a forge-launched run's row and detail
// carry its pull request and say its requester is a forge account.
func TestTheConsoleShowsADryRunsPlanAndItsPullRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	h.waitStatus("1", StatusSucceeded, StatusFailed)
	stored, _ := h.srv.db.GetRun("1")
	if stored.DryPlan == nil {
		t.Fatalf("the dry run recorded no plan: %s", stored.Message)
	}
	carol := consoleAs(h, h.identity("carol"))
	p := consoleRun(t, carol, "1").Proposal
	if p == nil || !p.DryRun || p.Digest != stored.DryPlan.Digest || p.Add != 3 || p.Changes == nil || len(p.Changes.Resources) != 3 {
		t.Fatalf("the console's dry run plan: %+v", p)
	}

	head := strings.Repeat("1a", 20)
	if _, err := h.srv.db.UpdateRun("1", func(r *store.Run) error {
		r.Requester, r.RequesterKind = "octocat", store.RequesterForge
		r.PullRequest = &store.PullRequest{Forge: "corp", Repository: "platform/infra", Number: 12, HeadSHA: head, DeliveryID: "d-1"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := carol.Runs(context.Background())
	if err != nil || len(rows) != 1 {
		t.Fatalf("Runs: %v, %v", rows, err)
	}
	if pr := rows[0].PullRequest; pr == nil || !rows[0].Forge || rows[0].Agent || pr.Repository != "platform/infra" || pr.Number != 12 || pr.HeadSHA != head {
		t.Errorf("the console's row of a forge run: %+v, pull request %+v", rows[0], pr)
	}
	if d := consoleRun(t, carol, "1"); d.PullRequest == nil || d.PullRequest.Forge != "corp" || d.Proposal.Requested != "octocat (forge)" {
		t.Errorf("the console's detail of a forge run: %+v, requested %q", d.PullRequest, d.Proposal.Requested)
	}
}
