package forge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// digestA and digestB are saved plans' digests as the store writes them.
const (
	digestA = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	digestB = "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

// everySection is planview's fixture of a change in every section.
func everySection(t testing.TB) *planview.ChangeSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "planview", "testdata", "changeset_every_section.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs planview.ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return &cs
}

// typicalReport is a merged pull request with a plan of each kind (saved,
// refused, failed, running) and an apply awaiting approval that differs
// from the plan shown, one applied and one stale.
func typicalReport(t testing.TB) Report {
	cs := everySection(t)
	return Report{
		Repository: "acme/infra", Number: 42,
		HeadSHA: "4f2a9c1e0b7d3a5f6e8c9b0a1d2e3f4a5b6c7d8e",
		SSH:     "ssh -p 2222 switchtender.example.com",
		Plans: []RunReport{
			{Template: "network", RunID: "17", Status: store.StatusSucceeded, Digest: digestA, Changes: cs,
				Add: 1, Change: 1, Destroy: 2, Replace: 1, Forget: 2},
			{Template: "dns", RunID: "18", Status: store.StatusRefused,
				Findings: []store.Finding{
					{Address: "data.external.lookup", File: "dns/main.tf", Line: 12, Reason: "an external data source runs a program"},
					{Address: "module.records", File: "dns/records.tf", Line: 3, Reason: "a module source outside the repository"},
				}},
			{Template: "cache", RunID: "19", Status: store.StatusFailed, Message: "init failed: exit status 1\nError: Failed to query available provider packages"},
			{Template: "queue", RunID: "20", Status: store.StatusRunning},
		},
		Superseded: []string{"0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "1b2c3d4e5f60718293a4b5c6d7e8f90123456789"},
		MergeSHA:   "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
		Applies: []RunReport{
			{Template: "network", RunID: "21", Status: store.StatusAwaitingApproval, Digest: digestB, Changes: cs,
				Add: 1, Change: 2, Destroy: 2, Replace: 1, Forget: 2, Compared: true,
				Differences: []string{"aws_iam_policy.deploy: updated, and the plan shown did not change it"}},
			{Template: "cache", RunID: "22", Status: store.StatusSucceeded, Digest: digestA, ApprovedBy: "alice", Compared: true, Add: 3},
			{Template: "dns", RunID: "23", Status: store.StatusStale, Digest: digestA, Stale: true,
				StaleReason: "the state changed after the plan (serial 41, now 42)"},
		},
		Note: "The pull request comes from a fork: its plans run with the read-only credentials.",
	}
}
