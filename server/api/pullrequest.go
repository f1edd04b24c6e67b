package api

import (
	"fmt"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// pullRequestWire is a run's pull request as the contract writes it
// (docs/json.md "pull_request"): every field, strings "" when unset and
// differences [] when there are none.
type pullRequestWire struct {
	Forge        string   `json:"forge"`
	Repository   string   `json:"repository"`
	Number       int      `json:"number"`
	HeadSHA      string   `json:"head_sha"`
	MergeSHA     string   `json:"merge_sha"`
	DeliveryID   string   `json:"delivery_id"`
	SupersededBy string   `json:"superseded_by"`
	ShownRun     string   `json:"shown_run"`
	Compared     bool     `json:"compared"`
	Differences  []string `json:"differences"`
}

// normalPullRequest is pr as the contract writes it, or nil for none.
func normalPullRequest(pr *store.PullRequest) *pullRequestWire {
	if pr == nil {
		return nil
	}
	return &pullRequestWire{Forge: pr.Forge, Repository: pr.Repository, Number: pr.Number, HeadSHA: pr.HeadSHA, MergeSHA: pr.MergeSHA,
		DeliveryID: pr.DeliveryID, SupersededBy: pr.SupersededBy, ShownRun: pr.ShownRun, Compared: pr.Compared, Differences: OrEmpty(pr.Differences)}
}

// PullRequestLines are the lines `show` says about the pull request a
// forge-launched run belongs to, without indent: which one
// (screentext.PullRequest), the newer head that superseded it, and for
// the apply a merge proposed, what the comparison with the plan shown on
// the pull request found — "the same changes", or each difference on a
// line of its own after a line that counts them. Forge values are escaped
// as units (screentext.Field); the differences, sentences the server
// composed, as sentences (screentext.Sentence). None for a run without a
// pull request.
func PullRequestLines(pr *store.PullRequest) []string {
	if pr == nil {
		return nil
	}
	lines := []string{"pull request: " + screentext.PullRequest(pr.Forge, pr.Repository, pr.Number, pr.HeadSHA, pr.MergeSHA)}
	if pr.SupersededBy != "" {
		lines = append(lines, "superseded on the pull request by head "+screentext.ShortCommit(pr.SupersededBy))
	}
	return append(lines, comparisonLines(pr)...)
}

// comparisonLines say what comparing a merge's apply with the plan shown
// on its pull request found; none when it has no shown run.
func comparisonLines(pr *store.PullRequest) []string {
	shown := fmt.Sprintf("the plan shown on the pull request (run %s)", screentext.Field(pr.ShownRun))
	switch {
	case pr.ShownRun == "":
		return nil
	case !pr.Compared:
		return []string{"to be compared with " + shown + " once its plan is made"}
	case len(pr.Differences) == 0:
		return []string{"compared with " + shown + ": the same changes"}
	}
	n := len(pr.Differences)
	lines := []string{fmt.Sprintf("compared with %s: %d %s", shown, n, Plural(n, "difference", "differences"))}
	for _, d := range pr.Differences {
		lines = append(lines, "  "+screentext.Sentence(d))
	}
	return lines
}
