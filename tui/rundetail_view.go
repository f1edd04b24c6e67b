package tui

import (
	"fmt"
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
	b.WriteString(d.pullRequestLines())
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
		if p.DryRun {
			tabs = strings.Replace(tabs, "Proposal", "Plan", 1)
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
// messageRows lines; a longer one is cut at a word and ends with a
// pointer to m, which shows it whole.
func (d *runDetail) messageLines() string {
	w := max(10, d.width)
	text := "message: " + cleanSentence(d.run.Message)
	const more = "… (m: whole)"
	n := d.messageRows()
	if n == 1 {
		return cutAtWord(text, w, more) + "\n"
	}
	lines := strings.Split(lipgloss.NewStyle().Width(w).Render(text), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	if len(lines) > n {
		lines = append(lines[:n-1], cutAtWord(strings.Join(lines[n-1:], " "), w, more))
	}
	return strings.Join(lines, "\n") + "\n"
}

// roomyRows is the screen height from which the detail screen's header is
// drawn whole: on a shorter screen the run's message takes one row and the
// proposal's requester is not said twice, so the pane below keeps the rows
// for the plan's risk sections (at 80x24 they fit the first screen).
const roomyRows = 40

// roomy reports whether the screen is at least roomyRows high.
func (d *runDetail) roomy() bool { return d.h >= roomyRows }

// messageRows is how many rows a run's message takes at most on the
// detail screen: 3, or 1 on a screen that is not roomy.
func (d *runDetail) messageRows() int {
	if d.roomy() {
		return 3
	}
	return 1
}

// cutAtWord is s when it fits in w cells, else its longest start that
// ends at a word (before a space, without the space or the punctuation
// before it) and fits with more after it, then more. A first word too long
// for the width is cut where it must be (trunc).
func cutAtWord(s string, w int, more string) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	budget := w - lipgloss.Width(more)
	cut, used := -1, 0
	for i, r := range s {
		if r == ' ' && i > 0 {
			cut = i
		}
		used += lipgloss.Width(string(r))
		if used > budget {
			break
		}
	}
	if head := strings.TrimRight(s[:max(cut, 0)], " ,;:"); cut > 0 && head != "" {
		return head + more
	}
	return strings.TrimSuffix(trunc(s, budget+1), "…") + more
}

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
	return line + "   requester: " + requester(r.RunSummary)
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
	case modeFilter:
		b.WriteString(st.faint.Render(trunc(d.changesStatus(), d.width)) + "\n")
		b.WriteString(d.filterIn.View() + "\n")
	default:
		b.WriteString(st.faint.Render(d.paneStatus()) + "\n")
		b.WriteString(d.noticeLine())
	}
	b.WriteString(fitHelp(d.help, d.keys(), d.width, keyUnfold, keyFilter, keyTofuText, keyScroll, keyPane, keyFollow, keyBack,
		keyRerun, keyReconcile, keyCancelRun))
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
	switch {
	case d.onChanges():
		return trunc(d.changesStatus(), d.width)
	case d.hasChanges():
		return trunc(fmt.Sprintf("%s %3.0f%% · tofu's own rendering · t: the view", d.paneName(), d.prop.percent()*100), d.width)
	}
	if d.pane == paneProposal && d.hasPanel() {
		name := d.paneName()
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

// paneName names the second pane: "plan" for a dry run's plan, which
// proposes nothing, "proposal" otherwise.
func (d *runDetail) paneName() string {
	if d.hasProposal() && d.run.Proposal.DryRun {
		return "plan"
	}
	return "proposal"
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
	case modeFilter:
		return bindings{keyFilterKeep, keyFilterClear, keyCtrlC}
	case modeBusy:
		return bindings{keyCtrlC}
	}
	b := bindings{keyBack, keyScroll}
	if d.hasPanel() {
		b = append(b, keyPane)
	}
	b = append(b, d.actionKeys()...)
	if d.pane == paneLog || !d.hasPanel() {
		b = append(b, keyFollow)
	}
	if d.onChanges() {
		b = append(b, keyUnfold, keyFilter)
	}
	if d.hasChanges() {
		b = append(b, keyTofuText)
	}
	return append(b, keyHelpAll, keyQuit)
}

// actionKeys are the keys of what can be done to the run now.
func (d *runDetail) actionKeys() bindings {
	var b bindings
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
	return b
}

// allKeys is every key of the detail screen, for the full help.
func (d *runDetail) allKeys() bindings {
	return bindings{keyBack, keyScroll, keyTop, keyFollow, keyPane, keyTofuText, keyUnfold, keyUnfoldAll, keyFilter,
		keyApprove, keyReject, keyCancelRun, keyRerun, keyReconcile, keyWaiting, keyMessage, keyHelpAll, keyQuit}
}

// layout sizes the viewports to the space between top and bottom.
func (d *runDetail) layout() {
	top := strings.TrimSuffix(d.top(), "\n")
	h := max(1, d.h-lipgloss.Height(top)-lipgloss.Height(d.bottom()))
	d.prop.setSize(d.width, h)
	if d.changes != nil {
		d.changes.setSize(d.width, h)
	}
	d.log.setSize(d.width, h)
	if d.following {
		d.log.gotoBottom()
	}
}

func (d *runDetail) View() string {
	var body string
	if d.onChanges() && d.changes != nil {
		body = d.changes.view()
	} else if d.pane == paneProposal && d.hasPanel() {
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
