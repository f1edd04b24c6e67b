package tui

import (
	"fmt"
	"strings"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
)

// --- a forge-launched run's pull request ---

// pullRequestLines are the header lines of a run a forge launched: which
// pull request (screentext.PullRequest, wrapped, never cut), the newer
// head that superseded it, and for a merge's apply what comparing it with
// the plan shown on the pull request found, in one line (the proposal
// pane lists the differences). "" for any other run.
func (d *runDetail) pullRequestLines() string {
	pr := d.run.PullRequest
	if pr == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(wrapHard("pull request: "+screentext.PullRequest(pr.Forge, pr.Repository, pr.Number, pr.HeadSHA, pr.MergeSHA), d.width) + "\n")
	if pr.SupersededBy != "" {
		b.WriteString(trunc("superseded on the pull request by head "+screentext.ShortCommit(pr.SupersededBy), d.width) + "\n")
	}
	if l := comparedLine(pr); l != "" {
		style := d.st.faint
		if pr.Compared && len(pr.Differences) > 0 {
			style = d.st.danger
		}
		b.WriteString(style.Render(cutAtWord(l, d.width, "…")) + "\n")
	}
	return b.String()
}

// comparedLine says what comparing a merge's apply with the plan shown on
// its pull request found; "" without a shown run.
func comparedLine(pr *PullRequest) string {
	shown := "the plan shown on the pull request (run " + cleanLine(pr.ShownRun) + ")"
	switch {
	case pr.ShownRun == "":
		return ""
	case !pr.Compared:
		return "to be compared with " + shown + " once its plan is made"
	case len(pr.Differences) == 0:
		return "compared with " + shown + ": the same changes"
	}
	n := len(pr.Differences)
	return fmt.Sprintf("compared with %s: %d %s", shown, n, plural(n, "difference", "differences"))
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// differenceLines are the proposal pane's lines on how a merge's apply
// differs from the plan shown on its pull request: a heading, then each
// difference; none when they agree or were not compared.
func (d *runDetail) differenceLines() []planview.Line {
	pr := d.run.PullRequest
	if pr == nil || !pr.Compared || len(pr.Differences) == 0 {
		return nil
	}
	out := []planview.Line{{Role: planview.RoleDestroy, Text: "Differs from " + strings.TrimPrefix(comparedLine(pr), "compared with ")}}
	for _, diff := range pr.Differences {
		out = append(out, planview.Line{Indent: 2, Text: "• " + cleanSentence(diff)})
	}
	return out
}

// writeDifferences writes differenceLines as text, for the pane on tofu's
// own rendering.
func (d *runDetail) writeDifferences(b *strings.Builder) {
	lines := d.differenceLines()
	for i, l := range lines {
		text := strings.Repeat(" ", l.Indent) + l.Text
		if i == 0 {
			text = d.st.danger.Render(text)
		}
		b.WriteString(text + "\n")
	}
	if len(lines) > 0 {
		b.WriteString("\n")
	}
}

// --- a dry run's plan ---

// dryRunNote says, where a held plan's rules are listed, that a dry run's
// plan has none.
const dryRunNote = "A dry run's plan: it proposes nothing, so no rule holds it; its plan file was not kept."

// dryRunLines are the summary's lines beside the destroy count for a dry
// run's plan, in place of the rules that held it: nothing holds or
// releases it.
func dryRunLines(p *Proposal) []string {
	return []string{planCounts(p), "a dry run: it proposes nothing to approve"}
}
