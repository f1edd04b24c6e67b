package tui

import (
	"strings"
	"testing"
	"time"
)

const (
	prHead  = "1a2b3c4d5e6f708192a3b4c5d6e7f80911223344"
	prMerge = "5e6f7a8b9c0d1e2f3a4b5c6d7e8f901234567890"
	// prPlanDigest is the digest of the plan pull request run r-8 made.
	prPlanDigest = "sha256:4f1b2b0b822cd15d6c15b0f00a089f86d081884c7d659a2feaa0c55ad015a3bf"
)

// withPullRequests adds, newest first, r-9, the held apply a merge of
// platform/infra#12 proposed (it differs from the plan shown on the pull
// request, r-8), and r-8, the pull request's dry run, whose plan carries
// its change set cs.
func withPullRequests(t *testing.T, f *fakeBackend) {
	t.Helper()
	pr := &PullRequest{Forge: "corp", Repository: "platform/infra", Number: 12, HeadSHA: prHead}
	plan := RunSummary{ID: "r-8", Template: "network", Kind: "plan", Status: "succeeded", Requester: "octocat", Forge: true,
		CreatedAt: clock.Add(-10 * time.Minute), PullRequest: pr}
	merged := *pr
	merged.MergeSHA, merged.ShownRun, merged.Compared = prMerge, "r-8", true
	merged.Differences = []string{"terraform_data.web: replaced here, updated on the pull request"}
	apply := RunSummary{ID: "r-9", Template: "network", Kind: "apply", Status: "awaiting_approval", Requester: "octocat", Forge: true,
		CreatedAt: clock.Add(-time.Minute), PullRequest: &merged, Message: "held for approval"}
	f.runs = append([]RunSummary{apply, plan}, f.runs...)
	f.details["r-8"] = RunDetail{RunSummary: plan, Project: "infra", Command: "infra/network", Tool: "opentofu",
		Proposal: &Proposal{Digest: prPlanDigest, Stage: "plan", DryRun: true, Add: 1, Destroy: 2, Replace: 1,
			Requested: "octocat (forge)", Changes: everySection(t)}}
	held := f.details["r-7"]
	p := *held.Proposal
	held.RunSummary, held.Proposal = apply, &p
	f.details["r-9"] = held
}

// The run list gives runs of a pull request a PULL REQUEST column
// (repository#number and short head), marks a forge requester, and keeps
// the number and head when the column is too narrow for the repository
// (at 80 columns).
func TestTheRunListNamesAForgeRunsPullRequest(t *testing.T) {
	f := newFake()
	withPullRequests(t, f)
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	golden(t, "runlist_pull_request", d.view())
	for _, want := range []string{"PULL REQUEST", "#12 1a2b3c4d"} {
		if !strings.Contains(d.view(), want) {
			t.Errorf("the run list lacks %q:\n%s", want, d.view())
		}
	}
	wide := newDriver(t, f, Options{Width: 140, Height: 30})
	wide.waitText("r-4")
	golden(t, "runlist_pull_request_wide", wide.view())
	if !strings.Contains(wide.view(), "platform/infra#12 1a2b3c4d") || !strings.Contains(wide.view(), "octocat [forge]") {
		t.Errorf("the wide run list does not name the pull request whole:\n%s", wide.view())
	}
}

// A pull request cell keeps the number and head commit when it must be
// cut: the repository's start goes first.
func TestAPullRequestCellKeepsTheNumberAndHead(t *testing.T) {
	pr := &PullRequest{Repository: "platform/infra", Number: 12, HeadSHA: prHead}
	for w, want := range map[int]string{40: "platform/infra#12 1a2b3c4d", 20: "…m/infra#12 1a2b3c4d", 13: "#12 1a2b3c4d", 12: "#12 1a2b3c4d", 10: "#12 1a2b3…"} {
		if got := prCell(pr, w); got != want {
			t.Errorf("prCell at %d cells = %q, want %q", w, got, want)
		}
	}
}

// A dry run's detail opens on the change view of its plan, as a held
// apply's proposal pane does, and says it proposes nothing; a pull
// request's run names its pull request in full.
func TestADryRunsDetailShowsItsPlansChangeView(t *testing.T) {
	f := newFake()
	withPullRequests(t, f)
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-8")
	d.waitText("[Plan]")
	golden(t, "dryrun_plan", d.view())
	for _, want := range []string{"pull request: corp platform/infra#12 at 1a2b3c4d (head)", "a dry run: it proposes nothing",
		"digest: " + prPlanDigest, "Replaced (1)", "requester: octocat [forge]"} {
		if !strings.Contains(d.view(), want) {
			t.Errorf("the dry run's detail lacks %q:\n%s", want, d.view())
		}
	}
	lines := strings.Split(d.view(), "\n")
	if help := lines[len(lines)-1]; strings.Contains(help, "approve") || strings.Contains(help, "reject") {
		t.Errorf("a dry run's plan offers an approval: %s", help)
	}
}

// A merge's apply names its merge commit and says how it differs from
// the plan shown on the pull request, in the header and, difference by
// difference, in its proposal pane.
func TestAMergesApplySaysHowItDiffersFromThePlanShown(t *testing.T) {
	f := newFake()
	withPullRequests(t, f)
	d := newDriver(t, f, Options{Width: 100, Height: 40})
	d.openRun("r-9")
	d.waitText("DESTROYS 2")
	for _, want := range []string{"pull request: corp platform/infra#12 at 1a2b3c4d (head), merge 5e6f7a8b",
		"compared with the plan shown on the pull request (run r-8): 1 difference",
		"Differs from the plan shown on the pull request (run r-8): 1 difference",
		"• terraform_data.web: replaced here, updated on the pull request"} {
		if !strings.Contains(d.view(), want) {
			t.Errorf("the merge's apply lacks %q:\n%s", want, d.view())
		}
	}
}
