package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
)

// A drift check's run screen: a summary under the header (when it ran,
// what drifted, what a reconcile would do, the digest, whether a
// reconcile can be proposed) and a Check pane beside the log with the
// drift and the changes per address and attribute (names only, never
// values), the rules a reconcile would meet and the masked plan text.

// checkCounts is what the kept plan does, in tofu's words (planCounts).
func checkCounts(c *CheckResult) string {
	return planCounts(&Proposal{Add: c.Add, Change: c.Change, Destroy: c.Destroy, Replace: c.Replace, Forget: c.Forget})
}

// checkedAt is when the check ran, in UTC, and how long ago.
func (d *runDetail) checkedAt(c *CheckResult) string {
	return c.CheckedAt.UTC().Format("2006-01-02 15:04 UTC") + " (" + age(d.now().Sub(c.CheckedAt)) + " ago)"
}

// checkSummary is the fixed block of a check: what it found and whether a
// reconcile can be proposed.
func (d *runDetail) checkSummary() string {
	c, st := d.run.Check, d.st
	var lines []string
	switch {
	case !c.Finished:
	case !c.Drifted:
		lines = append(lines, "checked "+d.checkedAt(c)+": no drift")
	default:
		lines = append(lines, fmt.Sprintf("checked %s: %d changed outside OpenTofu", d.checkedAt(c), len(c.Drift)))
		dl := fmt.Sprintf("DESTROYS %d", c.Destroy)
		if c.Destroy > 0 {
			dl = st.danger.Render(dl)
		}
		lines = append(lines, "a reconcile would: "+dl+" · "+checkCounts(c))
	}
	for i, l := range lines {
		lines[i] = trunc(l, d.width)
	}
	if c.Digest != "" {
		lines = append(lines, wrapHard("digest: "+cleanLine(c.Digest), d.width))
	}
	lines = append(lines, d.reconcileLine(c))
	return strings.Join(lines, "\n") + "\n"
}

// reconcileLine says whether a reconcile can be proposed, and if not why
// (the server's sentence: no drift, superseded by check N, reconciled by
// run N).
func (d *runDetail) reconcileLine(c *CheckResult) string {
	st := d.st
	switch {
	case !c.Reconcilable:
		return trunc("reconcile: "+cleanSentence(c.Reconcile), d.width)
	case d.id.CanLaunch:
		return st.waiting.Render(trunc("reconcile: can be proposed · P proposes applying exactly this plan", d.width))
	}
	return trunc("reconcile: can be proposed by someone with the launch role", d.width)
}

// checkPanel is the Check pane's text, for a check that recorded its
// finding: the lines above the plan text, and the plan text.
func (d *runDetail) checkPanel() (head, plan string) {
	c, st := d.run.Check, d.st
	var b strings.Builder
	if !c.Drifted {
		b.WriteString("No drift: the state matches the configuration.\n")
		return b.String(), ""
	}
	d.writeDiffs(&b, "Changed outside OpenTofu", c.Drift)
	d.writeDiffs(&b, "The configuration would", c.Changes)
	for _, h := range c.Holds {
		l := "A reconcile would be held by rule " + cleanLine(h.Rule) + " too: " + cleanSentence(h.Reason)
		b.WriteString(lipgloss.NewStyle().Width(max(10, d.width)).Render(l) + "\n") // at words: the pane would cut it anywhere
	}
	if len(c.Holds) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(st.label.Render("Plan (tofu's rendering, masked)") + "\n")
	if c.PlanText == "" {
		b.WriteString("  (no plan text)\n")
	}
	return b.String(), c.PlanText
}

// writeDiffs lists resource diffs under title: the action and address,
// then the names of the attributes that differ.
func (d *runDetail) writeDiffs(b *strings.Builder, title string, ds []ResourceDiff) {
	b.WriteString(d.st.label.Render(fmt.Sprintf("%s (%d)", title, len(ds))) + "\n")
	if len(ds) == 0 {
		b.WriteString("  nothing\n")
	}
	addrs := make([]string, len(ds))
	for i, r := range ds {
		addrs[i] = r.Address
	}
	looks := lookalikes(map[string][]string{"": addrs})
	for _, r := range ds {
		line := "  " + cleanLine(r.Action) + " " + cleanLine(r.Address)
		if r.Action == "delete" {
			line = d.st.danger.Render(line)
		}
		b.WriteString(line + "\n")
		if l, ok := looks[r.Address]; ok {
			b.WriteString(d.st.danger.Render("      ! "+l.String()) + "\n")
		}
		if len(r.Attributes) > 0 {
			attrs := make([]string, len(r.Attributes))
			for i, a := range r.Attributes {
				attrs[i] = cleanLine(a)
			}
			b.WriteString("      differs: " + strings.Join(attrs, ", ") + "\n")
		}
	}
	b.WriteString("\n")
}

// reconcileBody is the dialog before a reconcile is proposed: the digest
// it carries, what it does, and that it is held for a person.
func (d *runDetail) reconcileBody() string {
	st, c := d.st, d.run.Check
	var body strings.Builder
	body.WriteString(st.label.Render("Propose a reconcile of check "+cleanLine(d.runID)+"?") + "\n")
	body.WriteString(wrapHard(cleanLine(c.Digest), max(20, d.width-4)) + "\n")
	body.WriteString(st.danger.Render(fmt.Sprintf("DESTROYS %d", c.Destroy)) + " · " + checkCounts(c) + "\n")
	body.WriteString(trunc("a new run carries exactly this plan, held for a person's approval", max(20, d.width-4)) + "\n")
	body.WriteString("y propose it · n/esc keep")
	return body.String()
}
