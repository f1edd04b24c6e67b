package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/switchtender/switchtender/screentext"
)

// --- the proposal pane ---

var actionOrder = []string{"destroy", "replace", "change", "add", "forget"}
var actionMark = map[string]string{"destroy": "-", "replace": "-/+", "change": "~", "add": "+", "forget": "forget"}

// renderProposal fills the proposal pane: staleness, addresses by action,
// the rules that hold it, findings and the masked plan text. keep keeps the
// scroll position.
func (d *runDetail) renderProposal(keep bool) {
	if d.hasCheck() {
		head, plan := d.checkPanel()
		d.setPanel(head, plan, keep)
		return
	}
	if !d.hasProposal() {
		d.setPanel("", "", false)
		return
	}
	p := d.run.Proposal
	if p.Changes != nil && !d.tofuText {
		d.renderChanges(p, keep)
		return
	}
	var b strings.Builder
	d.writeStale(&b, p)
	d.writeDifferences(&b)
	if p.Changes != nil { // tofu's text, one key away from the change view, which has the rest
		b.WriteString(d.st.label.Render("Plan (tofu's rendering, masked)") + "\n")
		if p.PlanText == "" {
			b.WriteString(noPlanText(p) + "\n")
		}
		d.setPanel(b.String(), p.PlanText, keep)
		return
	}
	if p.Stage == "plan" && !p.DryRun { // a dry run's plan records counts, not addresses
		d.writeAddresses(&b, p)
		b.WriteString("\n")
	}
	d.writeHolds(&b, p)
	d.writeVars(&b)
	d.writeFindings(&b, p)
	b.WriteString("\n" + d.st.label.Render("Plan (tofu's rendering, masked)") + "\n")
	if p.PlanText == "" {
		b.WriteString(noPlanText(p) + "\n")
	}
	d.setPanel(b.String(), p.PlanText, keep)
}

// noPlanText is the pane's line for p without tofu's text: a dry run's is
// in its log, which the other pane shows.
func noPlanText(p *Proposal) string {
	if p.DryRun {
		return "  (tofu's own rendering is the run's log: tab shows it)"
	}
	return "  (no plan text)"
}

// setPanel puts head (the pane's own lines) and then the plan text plan,
// cleaned line by line, in the proposal pane; keep keeps the scroll
// position. The plan text is cleaned and measured once per text (d.plan),
// and a head and plan both unchanged leave the pane as it is, so a refresh
// costs the head's text, not the plan's.
func (d *runDetail) setPanel(head, plan string, keep bool) {
	before := d.plan.builds
	text := d.plan.of(plan)
	if head != d.propHead || d.plan.builds != before || len(d.prop.lines) == 0 {
		d.propHead = head
		d.prop.setText(measureLines(strings.Split(strings.TrimSuffix(head, "\n"), "\n")), text)
	}
	if !keep {
		d.prop.gotoTop()
	}
}

// writeStale writes why a stale plan can never apply, and which newer
// proposal exists, in full.
func (d *runDetail) writeStale(b *strings.Builder, p *Proposal) {
	if p.Stale {
		b.WriteString(d.st.danger.Render("STALE: this plan can never apply") + "\n")
		b.WriteString(lipgloss.NewStyle().PaddingLeft(2).Width(max(10, d.width)).Render(cleanSentence(p.StaleReason)) + "\n")
		b.WriteString("  " + d.rerunOr("R reruns it: a new run with the same answers") + "\n")
	}
	if p.NewerRun != "" {
		b.WriteString("a newer proposal exists: run " + cleanLine(p.NewerRun) + "\n")
	}
	if p.Stale || p.NewerRun != "" {
		b.WriteString("\n")
	}
}

func (d *runDetail) writeAddresses(b *strings.Builder, p *Proposal) {
	b.WriteString(d.st.label.Render("Resources by action") + "\n")
	keys := addressKeys(p.Addresses)
	looks := lookalikes(p.Addresses)
	if len(keys) == 0 {
		b.WriteString("  no resource changes\n")
	}
	for _, k := range keys {
		head := fmt.Sprintf("  %s (%d)", cleanLine(k), len(p.Addresses[k]))
		if k == "destroy" {
			head = d.st.danger.Render(head)
		}
		b.WriteString(head + "\n")
		mark := actionMark[k]
		if mark == "" {
			mark = "*"
		}
		for _, a := range p.Addresses[k] {
			b.WriteString("    " + mark + " " + cleanLine(a) + "\n")
			if l, ok := looks[a]; ok {
				b.WriteString(d.st.danger.Render("      ! "+l.String()) + "\n")
			}
		}
	}
}

// lookalikes marks, by address, the proposal's addresses a person could
// take for another (screentext.Lookalikes over every action's addresses).
func lookalikes(addrs map[string][]string) map[string]screentext.Lookalike {
	var all []string
	for _, k := range addressKeys(addrs) {
		all = append(all, addrs[k]...)
	}
	out := map[string]screentext.Lookalike{}
	for _, l := range screentext.Lookalikes(all) {
		out[l.Address] = l
	}
	return out
}

// addressKeys orders the actions: the known ones first, then the others by
// name.
func addressKeys(addrs map[string][]string) []string {
	keys := make([]string, 0, len(addrs))
	seen := map[string]bool{}
	for _, k := range actionOrder {
		if len(addrs[k]) > 0 {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	var other []string
	for k, v := range addrs {
		if !seen[k] && len(v) > 0 {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	return append(keys, other...)
}

// writeHolds lists every rule that holds the proposal, why, and whom it
// waits for or who released it.
func (d *runDetail) writeHolds(b *strings.Builder, p *Proposal) {
	if p.DryRun {
		b.WriteString(dryRunNote + "\n")
		return
	}
	if len(p.Holds) == 0 {
		if p.Stage == "plan" {
			b.WriteString("No rule held this saved plan.\n")
		}
		return
	}
	b.WriteString(d.st.label.Render(d.holdsLabel()) + "\n")
	for _, h := range p.Holds {
		b.WriteString("  • " + cleanLine(h.Rule) + ": " + cleanSentence(h.Reason) + "\n")
		if s := d.holdState(h); s != "" {
			b.WriteString("      " + s + "\n")
		}
	}
}

// holdsLabel heads the rules that hold (or held) the proposal.
func (d *runDetail) holdsLabel() string {
	switch d.run.Status {
	case "awaiting_approval":
		return "Why it is held"
	case "refused":
		return "Rules that would also have held it"
	}
	return "Why it was held"
}

// holdState says who released h, whom it waits for, or that it was not
// released ("" for a refused run's rule, which nothing could release).
func (d *runDetail) holdState(h Hold) string {
	switch {
	case h.ReleasedBy != "":
		return "released by " + cleanLine(h.ReleasedBy)
	case d.run.Status == "awaiting_approval":
		return "waits for " + waitsFor(h)
	case d.run.Status == "refused":
		return ""
	}
	return "not released"
}

// writeVars lists the run's variables by name, secret ones as
// (sensitive) (the server never sends their values).
func (d *runDetail) writeVars(b *strings.Builder) {
	names := make([]string, 0, len(d.run.Vars))
	for k := range d.run.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	b.WriteString("\n" + d.st.label.Render("Variables") + "\n")
	if len(names) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, k := range names {
		b.WriteString("  " + cleanLine(k) + " = " + cleanLine(d.run.Vars[k]) + "\n")
	}
}

// writeFindings lists the configuration scan's findings; a proposal without
// any shows no section, rather than claiming a scan found nothing.
func (d *runDetail) writeFindings(b *strings.Builder, p *Proposal) {
	if len(p.Findings) > 0 {
		b.WriteString("\n" + d.st.label.Render(fmt.Sprintf("Scan findings (%d)", len(p.Findings))) + "\n")
	}
	for _, f := range p.Findings {
		where := ""
		if f.Where != "" {
			where = cleanLine(f.Where) + ": "
		}
		b.WriteString("  ! " + cleanLine(f.Address) + "\n      " + where + cleanLine(f.Reason) + "\n")
	}
}
