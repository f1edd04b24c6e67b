package tui

import (
	"fmt"
	"sort"

	"github.com/switchtender/switchtender/planview"
)

// --- the proposal pane on the change view ---

// onChanges reports whether the proposal pane shows the change view: the
// proposal carries its change set and tofu's text is not asked for.
func (d *runDetail) onChanges() bool {
	return d.pane == paneProposal && d.hasProposal() && d.run.Proposal.Changes != nil && !d.tofuText
}

// hasChanges reports whether the proposal carries its change set, so t
// switches between the change view and tofu's text.
func (d *runDetail) hasChanges() bool {
	return d.pane == paneProposal && d.hasProposal() && d.run.Proposal.Changes != nil
}

// renderChanges fills the change pane for p: the view is laid out once per
// proposal (digest), every item folded to its head; a refresh sets the
// pane's own lines only, so the cursor, the unfolded items and the filter
// stay. keep false goes to the top with the cursor on the first change.
func (d *runDetail) renderChanges(p *Proposal, keep bool) {
	if d.changes == nil || d.changes.digest != p.Digest {
		d.changes = newChangePane(d.st, planview.NewView(p.Changes), p.Digest, d.width, d.prop.height)
		keep = false
	}
	pre, post := d.ownLines(p)
	d.changes.setOwn(pre, post)
	if !keep {
		d.changes.gotoFirstChange()
	}
}

// toggleTofuText switches the proposal pane between the change view and
// tofu's own rendering; each keeps its own place.
func (d *runDetail) toggleTofuText() {
	d.tofuText = !d.tofuText
	d.renderProposal(true)
}

// ownLines are the proposal pane's lines around the change view: above
// it, why a stale plan can never apply and which newer proposal exists;
// below it, the rules that hold it, its variables and the scan's findings.
// A heading needs no blank line before it: only a line that is not one
// ("No rule held…", the pointer to tofu's text) has one.
func (d *runDetail) ownLines(p *Proposal) (pre, post []planview.Line) {
	plain := func(indent int, s string) planview.Line { return planview.Line{Indent: indent, Text: s} }
	if p.Stale {
		pre = append(pre, planview.Line{Role: planview.RoleDestroy, Text: "STALE: this plan can never apply"},
			plain(2, cleanSentence(p.StaleReason)), plain(2, d.rerunOr("R reruns it: a new run with the same answers")))
	}
	if p.NewerRun != "" {
		pre = append(pre, planview.Line{Role: planview.RoleHeading, Text: "a newer proposal exists: run " + cleanLine(p.NewerRun)})
	}
	pre = append(pre, d.differenceLines()...)
	holds := d.holdLines(p)
	if holds[0].Role != planview.RoleHeading {
		post = append(post, planview.Line{})
	}
	post = append(post, holds...)
	post = append(post, d.varLines()...)
	post = append(post, findingLines(p)...)
	post = append(post, planview.Line{}, planview.Line{Role: planview.RoleHidden, Text: "t shows tofu's own rendering of this plan"})
	return pre, post
}

// holdLines are the rules that hold the proposal, why, and whom each
// waits for or who released it.
func (d *runDetail) holdLines(p *Proposal) []planview.Line {
	if p.DryRun {
		return []planview.Line{{Text: dryRunNote}}
	}
	if len(p.Holds) == 0 {
		return []planview.Line{{Text: "No rule held this saved plan."}}
	}
	out := []planview.Line{{Role: planview.RoleHeading, Text: d.holdsLabel()}}
	for _, h := range p.Holds {
		out = append(out, planview.Line{Indent: 2, Text: "• " + cleanLine(h.Rule) + ": " + cleanSentence(h.Reason)})
		if s := d.holdState(h); s != "" {
			out = append(out, planview.Line{Indent: 6, Text: s})
		}
	}
	return out
}

// varLines are the run's variables by name, secret ones as the server
// sends them, (sensitive).
func (d *runDetail) varLines() []planview.Line {
	names := make([]string, 0, len(d.run.Vars))
	for k := range d.run.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	out := []planview.Line{{Role: planview.RoleHeading, Text: "Variables"}}
	if len(names) == 0 {
		out = append(out, planview.Line{Indent: 2, Text: "(none)"})
	}
	for _, k := range names {
		out = append(out, planview.Line{Indent: 2, Text: cleanLine(k) + " = " + cleanLine(d.run.Vars[k])})
	}
	return out
}

// findingLines are the configuration scan's findings, none without any.
func findingLines(p *Proposal) []planview.Line {
	if len(p.Findings) == 0 {
		return nil
	}
	out := []planview.Line{{Role: planview.RoleHeading, Text: fmt.Sprintf("Scan findings (%d)", len(p.Findings))}}
	for _, f := range p.Findings {
		where := ""
		if f.Where != "" {
			where = cleanLine(f.Where) + ": "
		}
		out = append(out, planview.Line{Role: planview.RoleWarning, Indent: 2, Text: "! " + cleanLine(f.Address)},
			planview.Line{Indent: 6, Text: where + cleanLine(f.Reason)})
	}
	return out
}

// changesStatus is the status line under the change view: the scroll
// position, the filter and the keys of the view.
func (d *runDetail) changesStatus() string {
	s := fmt.Sprintf("%s %3.0f%%", d.paneName(), d.changes.percent()*100)
	if d.changes.filter != "" {
		shown, all := d.changes.matches()
		s += fmt.Sprintf(" · filter \"%s\": %d of %d changes · esc clears", cleanLine(d.changes.filter), shown, all)
		return s
	}
	return s + " · enter unfolds · e all · / filter · t tofu's text"
}
