package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/switchtender/switchtender/screentext"
)

// --- the fixed proposal summary ---

// summary is the fixed proposal block: the destroy count first and large,
// tofu's counts, the rules and whom they wait for, then staleness, a newer
// proposal, how it was asked for (on a screen that is not roomy, only when
// that says more than the status line's requester) and the digest.
func (d *runDetail) summary(p *Proposal) string {
	st := d.st
	var big string
	var lines []string
	if p.Stage == "scan" {
		big = st.destroy.Render(fmt.Sprintf("SCAN FOUND %d", len(p.Findings)))
		lines = []string{"nothing is planned yet: the configuration would run code",
			"at plan time; releasing it plans exactly the modules scanned"}
	} else if p.Stage == "request" {
		big = st.box.Render("HELD BEFORE PLANNING")
		lines = []string{"nothing is planned yet: releasing it lets it plan,",
			"and the apply its plan proposes is held again"}
	} else {
		bs := st.box
		if p.Destroy > 0 {
			bs = st.destroy
		}
		big = bs.Render(fmt.Sprintf("DESTROYS %d", p.Destroy))
		lines = append([]string{planCounts(p)}, holdLines(p.Holds, d.run.Status)...)
		if p.DryRun {
			lines = dryRunLines(p)
		}
		if p.Stale {
			lines = []string{lines[0], "STALE: it can never apply and cannot be approved", "(" + d.rerunOr("R reruns it: a fresh plan, same answers") + ")"}
		}
	}
	sideW := max(10, d.width-lipgloss.Width(big)-2)
	for i, l := range lines {
		lines[i] = cutAtWord(l, sideW, "…")
	}
	if p.Stale {
		lines[1] = st.danger.Render(lines[1])
	}
	side := lipgloss.NewStyle().PaddingLeft(2).Render(strings.Join(lines, "\n"))
	var b strings.Builder
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, big, side) + "\n")
	if p.Stale {
		b.WriteString(st.danger.Render(cutAtWord("STALE: "+cleanSentence(p.StaleReason), d.width, "…")) + "\n")
	}
	if p.NewerRun != "" {
		b.WriteString(st.waiting.Render(trunc("a newer proposal exists: run "+cleanLine(p.NewerRun), d.width)) + "\n")
	}
	if d.roomy() || !d.saysRequester(p.Requested) {
		b.WriteString(trunc("requested: "+cleanLine(p.Requested), d.width) + "\n")
	}
	b.WriteString(wrapHard("digest: "+cleanLine(p.Digest), d.width) + "\n")
	return b.String()
}

// saysRequester reports whether requested (how the proposal was asked
// for: "carol (person)", "deploy-bot (agent), as an AI proposal", see
// api.RequestedHow) says only what the status line's requester does:
// who, and whether a person or an agent.
func (d *runDetail) saysRequester(requested string) bool {
	kind := " (person)"
	switch {
	case d.run.Agent:
		kind = " (agent)"
	case d.run.Forge:
		kind = " (forge)"
	}
	return requested == d.run.Requester+kind
}

// planCounts says what proposal p does in tofu's words
// (screentext.PlanCounts): "2 to add, 0 to change, 2 to destroy (1
// replaced)". p.Destroy already counts every delete, replacements included.
func planCounts(p *Proposal) string {
	return screentext.PlanCounts(p.Add, p.Change, p.Destroy, p.Replace, p.Forget)
}

// holdLines are two lines about the rules that hold a plan: which still
// hold it and whom each waits for, and which were released and by whom. A
// plan no rule held is "the saved plan"; "approved" is only said of rules a
// person released.
func holdLines(hs []Hold, status string) []string {
	if len(hs) == 0 {
		return []string{"no rule held it: the saved plan"}
	}
	if status == "refused" { // never held: the rules refused it, so nothing could release it
		var rules []string
		for _, h := range hs {
			rules = append(rules, cleanLine(h.Rule))
		}
		return []string{"would also have held it: " + strings.Join(rules, ", "), "refused by the rules: no approval releases it"}
	}
	if status != "awaiting_approval" && !allReleased(hs) {
		var rules []string
		for _, h := range hs {
			rules = append(rules, cleanLine(h.Rule))
		}
		return []string{"was held by: " + strings.Join(rules, ", "), "ended (" + cleanLine(status) + ") before every rule was released"}
	}
	var waiting, released []string
	for _, h := range hs {
		if h.ReleasedBy != "" {
			released = append(released, cleanLine(h.Rule)+" by "+cleanLine(h.ReleasedBy))
		} else {
			waiting = append(waiting, cleanLine(h.Rule)+" → "+shortWaitsFor(h))
		}
	}
	switch {
	case len(waiting) == 0:
		return []string{"approved: " + strings.Join(released, ", ")}
	case len(released) == 0:
		return []string{"held by: " + strings.Join(waiting, "; "), "released: none yet"}
	}
	return []string{"held by: " + strings.Join(waiting, "; "), "released: " + strings.Join(released, ", ")}
}

// allReleased reports whether a person released every hold.
func allReleased(hs []Hold) bool {
	for _, h := range hs {
		if h.ReleasedBy == "" {
			return false
		}
	}
	return true
}

// shortWaitsFor is waitsFor for the summary line.
func shortWaitsFor(h Hold) string {
	if len(h.Approvers) == 0 {
		return "any approver"
	}
	return waitsFor(h)
}

// rerunOr is hint when the console offers a rerun of the run, or what the
// identity can do instead.
func (d *runDetail) rerunOr(hint string) string {
	if d.rerunnable() {
		return hint
	}
	return "someone with the launch role may rerun it"
}

// waitsFor names who may release h.
func waitsFor(h Hold) string {
	if len(h.Approvers) == 0 {
		return "anyone with the approve role"
	}
	names := make([]string, len(h.Approvers))
	for i, a := range h.Approvers {
		names[i] = cleanLine(a)
	}
	return strings.Join(names, " or ")
}

// wrapHard breaks s into lines of at most w cells, so a digest is never cut.
func wrapHard(s string, w int) string {
	if w <= 0 || lipgloss.Width(s) <= w {
		return s
	}
	var out []string
	var cur strings.Builder
	n := 0
	for _, r := range s {
		rw := lipgloss.Width(string(r))
		if n+rw > w {
			out = append(out, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteRune(r)
		n += rw
	}
	out = append(out, cur.String())
	return strings.Join(out, "\n")
}
