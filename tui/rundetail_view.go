package tui

import (
	"fmt"
	"github.com/switchtender/switchtender/screentext"
	"sort"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
)

// --- rendering ---

func (d *runDetail) top() string {
	st := d.st
	var b strings.Builder
	if d.run == nil {
		b.WriteString(st.title.Render("Run "+cleanLine(d.runID)) + "\n")
		if d.loadErr != nil {
			b.WriteString(st.err.Render("! could not load the run: "+cleanLine(d.loadErr.Error())) + "\n")
		} else {
			b.WriteString("loading…\n")
		}
		return b.String()
	}
	r := d.run
	b.WriteString(st.title.Render(trunc("Run "+cleanLine(r.ID)+" · "+cleanLine(r.Template)+" · "+cleanLine(r.Kind), d.width)) + "\n")
	b.WriteString(d.statusLine() + "\n")
	b.WriteString(trunc(d.commandLine(), d.width) + "\n")
	if w := workersLine(r); w != "" {
		b.WriteString(trunc(w, d.width) + "\n")
	}
	if r.Message != "" {
		b.WriteString(d.messageLines())
	}
	if d.loadErr != nil {
		b.WriteString(st.err.Render(trunc("! refresh failed: "+cleanLine(d.loadErr.Error()), d.width)) + "\n")
	}
	if p := r.Proposal; p != nil {
		b.WriteString(d.summary(p))
		tabs := "  Proposal   [Log]"
		if d.pane == paneProposal {
			tabs = " [Proposal]   Log "
		}
		b.WriteString(st.label.Render(tabs) + st.faint.Render("  (tab switches)") + "\n")
	}
	if d.hasCheck() {
		b.WriteString(d.checkSummary())
	}
	if d.hasCheck() && d.hasPanel() {
		tabs := "  Check   [Log]"
		if d.pane == paneProposal {
			tabs = " [Check]   Log "
		}
		b.WriteString(st.label.Render(tabs) + st.faint.Render("  (tab switches)") + "\n")
	}
	return b.String()
}

// messageLines is the run's message wrapped to the width, at most
// maxMessageLines lines; a longer one ends with a pointer to m, which shows
// it whole.
func (d *runDetail) messageLines() string {
	wrapped := lipgloss.NewStyle().Width(max(10, d.width)).Render("message: " + cleanSentence(d.run.Message))
	lines := strings.Split(wrapped, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	if len(lines) > maxMessageLines {
		lines = lines[:maxMessageLines]
		const more = "… (m: whole)"
		last := lines[maxMessageLines-1]
		if lipgloss.Width(last)+lipgloss.Width(more) > d.width {
			last = strings.TrimSuffix(trunc(last, d.width-lipgloss.Width(more)+1), "…")
		}
		lines[maxMessageLines-1] = last + more
	}
	return strings.Join(lines, "\n") + "\n"
}

// maxMessageLines is how many lines a run's message takes at most on the
// detail screen.
const maxMessageLines = 3

// statusLine is the run's status, its marks and who asked.
func (d *runDetail) statusLine() string {
	r, st := d.run, d.st
	line := "status: " + cleanLine(r.Status)
	if r.ExitCode > 0 { // -1: no tool exited
		line += fmt.Sprintf(" (exit %d)", r.ExitCode)
	}
	switch {
	case r.Status == "stale":
	case r.Stale || (r.Proposal != nil && r.Proposal.Stale):
		line += " " + st.danger.Render("STALE")
	case r.WaitingForMe && r.Proposal != nil:
		line += " " + st.waiting.Render("▶ waiting for you")
	}
	return line + "   requester: " + requester(r.Requester, r.Agent)
}

// workersLine names the relay workers that took the run's phases, or "".
func workersLine(r *RunDetail) string {
	switch {
	case r.PlannedBy == "" && r.AppliedBy == "":
		return ""
	case r.PlannedBy == r.AppliedBy:
		return "relay worker: " + cleanLine(r.PlannedBy)
	case r.AppliedBy == "":
		return "relay worker: " + cleanLine(r.PlannedBy) + " (plan)"
	case r.PlannedBy == "":
		return "relay worker: " + cleanLine(r.AppliedBy) + " (apply)"
	}
	return "relay workers: " + cleanLine(r.PlannedBy) + " (plan), " + cleanLine(r.AppliedBy) + " (apply)"
}

// commandLine is where the run runs and how old it is.
func (d *runDetail) commandLine() string {
	r := d.run
	cmd := "command: " + cleanLine(r.Command)
	if r.Tool != "" {
		cmd += " (" + cleanLine(r.Tool) + ")"
	}
	if r.Project != "" {
		cmd += "   project: " + cleanLine(r.Project)
	}
	return cmd + "   age: " + age(d.now().Sub(r.CreatedAt))
}

// summary is the fixed proposal block: the destroy count first and large,
// tofu's counts, the rules and whom they wait for, then staleness, a newer
// proposal, who asked and the digest.
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
		if p.Stale {
			lines = []string{lines[0], "STALE: it can never apply and cannot be approved", "(" + d.rerunOr("R reruns it: a fresh plan, same answers") + ")"}
		}
	}
	sideW := max(10, d.width-lipgloss.Width(big)-2)
	for i, l := range lines {
		lines[i] = trunc(l, sideW)
	}
	if p.Stale {
		lines[1] = st.danger.Render(lines[1])
	}
	side := lipgloss.NewStyle().PaddingLeft(2).Render(strings.Join(lines, "\n"))
	var b strings.Builder
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, big, side) + "\n")
	if p.Stale {
		b.WriteString(st.danger.Render(trunc("STALE: "+cleanSentence(p.StaleReason), d.width)) + "\n")
	}
	if p.NewerRun != "" {
		b.WriteString(st.waiting.Render(trunc("a newer proposal exists: run "+cleanLine(p.NewerRun), d.width)) + "\n")
	}
	b.WriteString(trunc("requested: "+cleanLine(p.Requested), d.width) + "\n")
	b.WriteString(wrapHard("digest: "+cleanLine(p.Digest), d.width) + "\n")
	return b.String()
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
		return []string{"was held by: " + strings.Join(rules, ", "), "ended " + cleanLine(status) + " before every rule was released"}
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
	var b strings.Builder
	d.writeStale(&b, p)
	if p.Stage == "plan" {
		d.writeAddresses(&b, p)
		b.WriteString("\n")
	}
	d.writeHolds(&b, p)
	d.writeVars(&b)
	d.writeFindings(&b, p)
	b.WriteString("\n" + d.st.label.Render("Plan (tofu's rendering, masked)") + "\n")
	if p.PlanText == "" {
		b.WriteString("  (no plan text)\n")
	}
	d.setPanel(b.String(), p.PlanText, keep)
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
	if len(p.Holds) == 0 {
		if p.Stage == "plan" {
			b.WriteString("No rule held this saved plan.\n")
		}
		return
	}
	held := d.run.Status == "awaiting_approval"
	label := "Why it is held"
	if !held {
		label = "Why it was held"
	}
	if d.run.Status == "refused" {
		label = "Rules that would also have held it"
	}
	b.WriteString(d.st.label.Render(label) + "\n")
	for _, h := range p.Holds {
		b.WriteString("  • " + cleanLine(h.Rule) + ": " + cleanSentence(h.Reason) + "\n")
		switch {
		case h.ReleasedBy != "":
			b.WriteString("      released by " + cleanLine(h.ReleasedBy) + "\n")
		case held:
			b.WriteString("      waits for " + waitsFor(h) + "\n")
		case d.run.Status == "refused":
		default:
			b.WriteString("      not released\n")
		}
	}
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

func (d *runDetail) bottom() string {
	st := d.st
	var b strings.Builder
	switch d.mode {
	case modeConfirm:
		b.WriteString(st.box.Render(d.confirmBody()) + "\n")
	case modeConfirmCancel:
		b.WriteString(st.box.Render(st.label.Render("Cancel run "+cleanLine(d.runID)+"?")+
			" a running tool gets an interrupt first\ny cancel · n/esc keep") + "\n")
	case modeConfirmRerun:
		b.WriteString(st.box.Render(st.label.Render("Rerun run "+cleanLine(d.runID)+"?")+
			" a new run: same template, kind and answers\n(secret answers reused, never shown) · y rerun · n/esc keep") + "\n")
	case modeConfirmReconcile:
		b.WriteString(st.box.Render(d.reconcileBody()) + "\n")
	case modeReason:
		b.WriteString(st.label.Render("Reject the proposal of run "+cleanLine(d.runID)) + "\n")
		b.WriteString(d.reason.View() + "\n")
	case modeBusy:
		b.WriteString("sending…\n")
	default:
		b.WriteString(st.faint.Render(d.paneStatus()) + "\n")
		b.WriteString(d.noticeLine())
	}
	b.WriteString(fitHelp(d.help, d.keys(), d.width, keyScroll, keyPane, keyFollow, keyBack, keyRerun, keyReconcile, keyCancelRun))
	return b.String()
}

// confirmBody is the approval dialog: the digest it releases, what the plan
// does, and which rules this approval releases.
func (d *runDetail) confirmBody() string {
	st, p := d.st, d.run.Proposal
	var body strings.Builder
	body.WriteString(st.label.Render("Release this proposal of run "+cleanLine(d.runID)+"?") + "\n")
	body.WriteString(wrapHard(d.confirmDigest, max(20, d.width-4)) + "\n")
	if p.Stage == "scan" {
		body.WriteString(st.danger.Render(fmt.Sprintf("SCAN FOUND %d", len(p.Findings))) + " · it plans next, running what the scan found\n")
	} else if p.Stage == "request" {
		body.WriteString("it plans next; its apply is held again for approval\n")
	} else {
		body.WriteString(st.danger.Render(fmt.Sprintf("DESTROYS %d", p.Destroy)) + " · " + planCounts(p) + "\n")
		body.WriteString("the apply carries exactly the saved plan with this digest\n")
	}
	if l := d.releaseLine(); l != "" {
		body.WriteString(trunc(l, max(20, d.width-4)) + "\n")
	}
	body.WriteString("y release this digest · n/esc cancel")
	return body.String()
}

// releaseLine says which rules this identity's approval releases and which
// still hold the run after it.
func (d *runDetail) releaseLine() string {
	var mine, others []string
	for _, h := range d.run.Proposal.Holds {
		switch {
		case h.ReleasedBy != "":
		case len(h.Approvers) == 0 || containsName(h.Approvers, d.id.Name):
			mine = append(mine, cleanLine(h.Rule))
		default:
			others = append(others, cleanLine(h.Rule)+" (waits for "+waitsFor(h)+")")
		}
	}
	if len(mine) == 0 {
		return ""
	}
	l := "releases rule " + strings.Join(mine, ", ")
	if len(others) > 0 {
		l += "; still held by " + strings.Join(others, ", ")
	}
	return l
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// paneStatus says where the visible pane is: the log's following state or
// the proposal's scroll position.
func (d *runDetail) paneStatus() string {
	if d.pane == paneProposal && d.hasPanel() {
		name := "proposal"
		if d.hasCheck() {
			name = "check"
		}
		return fmt.Sprintf("%s %3.0f%%", name, d.prop.percent()*100)
	}
	switch {
	case d.logErr != nil:
		return d.st.err.Render("! log unavailable: " + cleanLine(d.logErr.Error()))
	case d.following && d.logEnded:
		return "— end of log —"
	case d.following:
		return "following the log"
	}
	line, _ := d.log.lineAt(d.log.top)
	status := "paused at line " + fmt.Sprint(line+1) + " — G to follow"
	if d.logEnded {
		status += " (log ended)"
	}
	return status
}

func (d *runDetail) noticeLine() string {
	switch {
	case d.notice == "":
		return ""
	case d.noticeIsErr:
		return d.st.err.Render(trunc("! "+d.notice, d.width)) + "\n"
	}
	return d.st.ok.Render(trunc(d.notice, d.width)) + "\n"
}

func (d *runDetail) keys() bindings {
	switch d.mode {
	case modeConfirm:
		return bindings{keyYes, keyNo}
	case modeConfirmCancel:
		return bindings{keyCancelYes, keyCancelNo}
	case modeConfirmRerun:
		return bindings{keyRerunYes, keyRerunNo}
	case modeConfirmReconcile:
		return bindings{keyReconcileYes, keyReconcileNo}
	case modeReason:
		return bindings{keySubmit, keyCancel, keyCtrlC}
	case modeBusy:
		return bindings{keyCtrlC}
	}
	b := bindings{keyBack, keyScroll}
	if d.hasPanel() {
		b = append(b, keyPane)
	}
	if d.canAct() {
		b = append(b, keyApprove, keyReject)
	}
	if d.cancellable() {
		b = append(b, keyCancelRun)
	}
	if d.rerunnable() {
		b = append(b, keyRerun)
	}
	if d.hasCheck() && d.reconcilable() {
		b = append(b, keyReconcile)
	}
	if d.pane == paneLog || !d.hasPanel() {
		b = append(b, keyFollow)
	}
	return append(b, keyHelpAll, keyQuit)
}

// allKeys is every key of the detail screen, for the full help.
func (d *runDetail) allKeys() bindings {
	return bindings{keyBack, keyScroll, keyTop, keyFollow, keyPane, keyApprove, keyReject, keyCancelRun,
		keyRerun, keyReconcile, keyWaiting, keyMessage, keyHelpAll, keyQuit}
}

// layout sizes the viewports to the space between top and bottom.
func (d *runDetail) layout() {
	top := strings.TrimSuffix(d.top(), "\n")
	h := max(1, d.h-lipgloss.Height(top)-lipgloss.Height(d.bottom()))
	d.prop.setSize(d.width, h)
	d.log.setSize(d.width, h)
	if d.following {
		d.log.gotoBottom()
	}
}

func (d *runDetail) View() string {
	var body string
	if d.pane == paneProposal && d.hasPanel() {
		body = d.prop.view()
	} else {
		body = d.log.view()
	}
	top := strings.TrimSuffix(d.top(), "\n")
	return top + "\n" + body + "\n" + d.bottom()
}

// fitHelp renders the help line for b in w cells: when it is too wide, the
// optional bindings are left out in the order given until it fits, so the
// keys that matter (quit among them) stay visible.
func fitHelp(h help.Model, b bindings, w int, optional ...key.Binding) string {
	for _, o := range optional {
		h.SetWidth(0)
		if lipgloss.Width(h.View(b)) <= w {
			break
		}
		b = without(b, o)
	}
	h.SetWidth(w)
	return h.View(b)
}

// without returns b less the bindings whose help is o's.
func without(b bindings, o key.Binding) bindings {
	out := make(bindings, 0, len(b))
	for _, k := range b {
		if k.Help() != o.Help() {
			out = append(out, k)
		}
	}
	return out
}
