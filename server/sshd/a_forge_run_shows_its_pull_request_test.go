package sshd

import (
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

const (
	headSHA  = "1a2b3c4d5e6f708192a3b4c5d6e7f80911223344"
	mergeSHA = "5e6f7a8b9c0d1e2f3a4b5c6d7e8f901234567890"
)

// forgeRun is a forge-launched run of template infra with pr.
func forgeRun(id string, pr *store.PullRequest) api.RunView {
	v := api.RunView{}
	v.ID, v.Template, v.Kind, v.Status = id, "infra", store.KindPlan, store.StatusSucceeded
	v.Requester, v.RequesterKind, v.CreatedAt = "octocat", store.RequesterForge, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	v.PullRequest = pr
	return v
}

// show names a forge run's pull request in one line (forge, repository,
// number, short head, short merge), says who asked as a forge account,
// and for a merge's apply what comparing it with the plan shown on the
// pull request found: the same changes, or each difference on its own
// line.
func TestShowNamesAForgeRunsPullRequest(t *testing.T) {
	pr := &store.PullRequest{Forge: "corp", Repository: "platform/infra", Number: 12, HeadSHA: headSHA, DeliveryID: "d"}
	var b strings.Builder
	writeRunHead(&b, forgeRun("8", pr))
	out := b.String()
	for _, want := range []string{"  pull request: corp platform/infra#12 at 1a2b3c4d (head)\n", "by octocat (forge)"} {
		if !strings.Contains(out, want) {
			t.Errorf("show of a pull request's plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "compared") || strings.Contains(out, "merge") {
		t.Errorf("a plan that is no merge's apply says a comparison:\n%s", out)
	}

	apply := *pr
	apply.MergeSHA, apply.ShownRun, apply.Compared = mergeSHA, "7", true
	v := forgeRun("9", &apply)
	v.Kind = store.KindApply
	b.Reset()
	writeRunHead(&b, v)
	for _, want := range []string{"pull request: corp platform/infra#12 at 1a2b3c4d (head), merge 5e6f7a8b\n",
		"compared with the plan shown on the pull request (run 7): the same changes\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("show of a merge's apply lacks %q:\n%s", want, b.String())
		}
	}

	apply.Differences = []string{"terraform_data.a: replaced here, updated there", "terraform_data.b: only here"}
	b.Reset()
	writeRunHead(&b, v)
	want := "  compared with the plan shown on the pull request (run 7): 2 differences\n" +
		"    terraform_data.a: replaced here, updated there\n    terraform_data.b: only here\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("show of a merge's apply that differs lacks\n%s\nin:\n%s", want, b.String())
	}
}

// The forge's values are escaped as units: a repository or SHA holding
// a newline or an escape sequence cannot forge a line or drive the
// terminal, and a head that is no full SHA is shown whole, not cut.
func TestAForgesValuesAreEscapedInShow(t *testing.T) {
	pr := &store.PullRequest{Forge: "corp", Repository: "evil/repo\n  compared with the plan: the same changes\x1b[2J", Number: 3,
		HeadSHA: "not-a-sha\x1b]0;x\a", DeliveryID: "d"}
	var b strings.Builder
	writeRunHead(&b, forgeRun("8", pr))
	out := b.String()
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\a") || strings.Contains(out, "\n  compared") {
		t.Errorf("a forge's values reach the screen raw:\n%q", out)
	}
	if !strings.Contains(out, `evil/repo\n  compared with the plan: the same changes\x1b[2J#3 at not-a-sha\x1b]0;x\x07 (head)`) {
		t.Errorf("the hostile pull request is not shown escaped and whole:\n%q", out)
	}
}

// runs adds a PULL REQUEST column, repository#number and short head,
// only when a listed run belongs to a pull request, and says a forge
// requester as one.
func TestRunsListsAForgeRunsPullRequest(t *testing.T) {
	person := forgeRun("1", nil)
	person.Requester, person.RequesterKind = "alice", store.RequesterPerson
	var b strings.Builder
	writeRunList(&b, []api.RunView{person})
	if strings.Contains(b.String(), "PULL REQUEST") {
		t.Errorf("runs without a pull request has its column:\n%s", b.String())
	}
	b.Reset()
	writeRunList(&b, []api.RunView{forgeRun("2", &store.PullRequest{Repository: "platform/infra", Number: 12, HeadSHA: headSHA}), person})
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(lines[0], "PULL REQUEST") || !strings.HasSuffix(lines[1], "platform/infra#12 1a2b3c4d") ||
		!strings.Contains(lines[1], "octocat (forge)") || !strings.Contains(lines[2], "alice (person)") {
		t.Errorf("runs with a pull request's run:\n%s", b.String())
	}
}

// show --changes of a dry run without a change set says why and names
// `log RUN`: a relay worker's dry run hands no plan over; a dry run on
// the control node that measured none says so.
func TestShowChangesOfADryRunWithoutOneSaysWhy(t *testing.T) {
	relayed := store.Run{ID: "5", Kind: store.KindPlan, Status: store.StatusSucceeded, PlannedBy: "w1"}
	local := store.Run{ID: "6", Kind: store.KindPlan, Status: store.StatusSucceeded}
	measured := store.Run{ID: "7", Kind: store.KindPlan, Status: store.StatusSucceeded, DryPlan: &store.DryPlan{Digest: "sha256:" + strings.Repeat("0", 64)}}
	for r, want := range map[*store.Run]string{
		&relayed:  "a dry run on a relay worker hands no plan to the control node",
		&local:    "this dry run measured no plan",
		&measured: "its rendering could not be read; `log 7`",
	} {
		err := noChanges(*r)
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "`log "+r.ID+"`") || api.ErrorCode(err) != api.ErrConflict {
			t.Errorf("show %s --changes: %v, want %q", r.ID, err, want)
		}
	}
}
