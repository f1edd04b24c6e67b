package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// key handles a key press in the detail's current mode.
func (d *runDetail) key(msg tea.KeyPressMsg) tea.Cmd {
	switch d.mode {
	case modeBusy:
		return nil
	case modeConfirm:
		return d.confirmKey(msg, keyYes, keyNo, "approval cancelled", d.approveCmd)
	case modeConfirmCancel:
		return d.confirmKey(msg, keyCancelYes, keyCancelNo, "run "+d.runID+" kept", d.cancelCmd)
	case modeConfirmRerun:
		return d.confirmKey(msg, keyRerunYes, keyRerunNo, "no rerun", d.rerunCmd)
	case modeConfirmReconcile:
		return d.confirmKey(msg, keyReconcileYes, keyReconcileNo, "no reconcile proposed", d.reconcileCmd)
	case modeReason:
		return d.reasonKey(msg)
	case modeFilter:
		return d.filterKey(msg)
	}
	if cmd, ok := d.viewKey(msg); ok {
		return cmd
	}
	if cmd, ok := d.actionKey(msg); ok {
		return cmd
	}
	switch {
	case d.onChanges():
		d.changes.scrollKey(msg)
		return nil
	case d.pane == paneProposal && d.hasPanel():
		d.proposalKey(msg)
		return nil
	}
	d.logKey(msg)
	return nil
}

// confirmKey answers a y/n dialog: yes sends the action, no says so.
func (d *runDetail) confirmKey(msg tea.KeyPressMsg, yes, no key.Binding, kept string, send func() tea.Cmd) tea.Cmd {
	switch {
	case key.Matches(msg, yes):
		d.mode = modeBusy
		return send()
	case key.Matches(msg, no):
		d.mode = modeNormal
		d.setNotice(kept, false)
	}
	return nil
}

func (d *runDetail) approveCmd() tea.Cmd {
	b, ctx, gen, id, digest := d.b, d.ctx, d.gen, d.runID, d.confirmDigest
	return func() tea.Msg {
		return actionDoneMsg{gen: gen, act: actApprove, digest: digest, err: b.Approve(ctx, id, digest)}
	}
}

func (d *runDetail) cancelCmd() tea.Cmd {
	b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
	return func() tea.Msg { return actionDoneMsg{gen: gen, act: actCancel, err: b.Cancel(ctx, id)} }
}

func (d *runDetail) rerunCmd() tea.Cmd {
	b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
	return func() tea.Msg {
		newID, err := b.Rerun(ctx, id)
		return actionDoneMsg{gen: gen, act: actRerun, newID: newID, err: err}
	}
}

// reconcileCmd proposes the reconcile of the check on screen.
func (d *runDetail) reconcileCmd() tea.Cmd {
	b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
	return func() tea.Msg {
		newID, err := b.Reconcile(ctx, id)
		return actionDoneMsg{gen: gen, act: actReconcile, newID: newID, err: err}
	}
}

// reasonKey edits the rejection reason; enter sends the rejection.
func (d *runDetail) reasonKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, keySubmit):
		reason := strings.TrimSpace(d.reason.Value())
		d.mode = modeBusy
		d.reason.Blur()
		b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
		return func() tea.Msg { return actionDoneMsg{gen: gen, act: actReject, err: b.Reject(ctx, id, reason)} }
	case key.Matches(msg, keyCancel):
		d.mode = modeNormal
		d.reason.Blur()
		return nil
	}
	var cmd tea.Cmd
	d.reason, cmd = d.reason.Update(msg)
	return cmd
}

// viewKey handles the change view's own keys: t switches to tofu's text
// and back; on the view, enter or space folds or unfolds the item under
// the cursor, e all of them, / opens the address filter, esc clears it,
// g and G go to the top and the end. ok is false for any other key.
func (d *runDetail) viewKey(msg tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	if key.Matches(msg, keyTofuText) && d.pane == paneProposal && d.hasProposal() {
		if !d.hasChanges() {
			d.setNotice("this proposal has no change view: it predates them or is not planned yet", true)
			return nil, true
		}
		d.toggleTofuText()
		return nil, true
	}
	if !d.onChanges() {
		return nil, false
	}
	cp := d.changes
	switch {
	case key.Matches(msg, keyBack) && cp.filter != "":
		cp.setFilter("")
		d.filterIn.Reset()
	case key.Matches(msg, keyFilter):
		d.mode = modeFilter
		d.filterIn.SetValue(cp.filter)
		d.filterIn.CursorEnd()
		return d.filterIn.Focus(), true
	case key.Matches(msg, keyUnfold):
		cp.toggle()
	case key.Matches(msg, keyUnfoldAll):
		cp.toggleAll()
	case key.Matches(msg, keyTop):
		cp.gotoTop()
	case key.Matches(msg, keyFollow):
		cp.gotoBottom()
	default:
		return nil, false
	}
	return nil, true
}

// filterKey edits the address filter, which applies as it is typed;
// enter keeps it, esc clears it.
func (d *runDetail) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, keyFilterKeep):
		d.mode = modeNormal
		d.filterIn.Blur()
		return nil
	case key.Matches(msg, keyFilterClear):
		d.mode = modeNormal
		d.filterIn.Blur()
		d.filterIn.Reset()
		if d.changes != nil {
			d.changes.setFilter("")
		}
		return nil
	}
	var cmd tea.Cmd
	d.filterIn, cmd = d.filterIn.Update(msg)
	if d.changes != nil {
		d.changes.setFilter(d.filterIn.Value())
	}
	return cmd
}

// actionKey handles the keys that navigate or open a dialog; ok is false
// for any other key.
func (d *runDetail) actionKey(msg tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	switch {
	case key.Matches(msg, keyBack):
		return func() tea.Msg { return backMsg{} }, true
	case key.Matches(msg, keyPane):
		d.switchPane()
		return nil, true
	case key.Matches(msg, keyWaiting):
		id := d.runID
		return func() tea.Msg { return nextWaitingMsg{after: id} }, true
	case key.Matches(msg, keyMessage):
		return d.showMessage(), true
	case key.Matches(msg, keyApprove):
		return d.open(d.whyNot(), modeConfirm), true
	case key.Matches(msg, keyReject):
		return d.openReject(), true
	case key.Matches(msg, keyCancelRun):
		return d.open(d.whyNoCancel(), modeConfirmCancel), true
	case key.Matches(msg, keyRerun):
		return d.open(d.whyNoRerun(), modeConfirmRerun), true
	case key.Matches(msg, keyReconcile):
		return d.open(d.whyNoReconcile(), modeConfirmReconcile), true
	case isPrintable(msg.String()) && !strings.Contains(scrollLetters, msg.String()):
		d.setNotice(unboundNote(msg.String()), true)
		return nil, true
	}
	return nil, false
}

// switchPane switches between the log and the proposal or check pane, or
// says the run has only its log.
func (d *runDetail) switchPane() {
	if !d.hasPanel() {
		d.setNotice("this run has only its log: no proposal or check to switch to", true)
		return
	}
	d.pane = 1 - d.pane
}

// showMessage shows the run's message whole, or says why it cannot.
func (d *runDetail) showMessage() tea.Cmd {
	if d.run == nil {
		d.setNotice("run "+d.runID+" is still loading", true)
		return nil
	}
	if d.run.Message == "" {
		d.setNotice("run "+d.runID+" has no message", true)
		return nil
	}
	return showText("Run "+cleanLine(d.runID)+": message", d.run.Message)
}

// openReject opens the rejection dialog with an empty, focused reason, or
// shows why it cannot.
func (d *runDetail) openReject() tea.Cmd {
	if cmd := d.open(d.whyNot(), modeReason); d.mode != modeReason {
		return cmd
	}
	d.reason.Reset()
	return d.reason.Focus()
}

// scrollLetters are the letters the log and proposal panes scroll with
// (the viewport's keys: f/b pages, u/d half pages, k/j lines, h/l
// sideways) and g/G, top and follow.
const scrollLetters = "fbudkjhlgG"

// open enters mode, or shows why (when why is not "") and stays.
func (d *runDetail) open(why string, mode int) tea.Cmd {
	if why != "" {
		d.setNotice(why, true)
		return nil
	}
	if mode == modeConfirm {
		d.confirmDigest = d.run.Proposal.Digest
	}
	d.mode = mode
	d.notice = ""
	return nil
}

func (d *runDetail) proposalKey(msg tea.KeyPressMsg) {
	switch {
	case key.Matches(msg, keyTop):
		d.prop.gotoTop()
	case key.Matches(msg, keyFollow):
		d.prop.gotoBottom()
	default:
		d.prop.update(msg)
	}
}

func (d *runDetail) logKey(msg tea.KeyPressMsg) {
	switch {
	case key.Matches(msg, keyFollow):
		d.following = true
		d.log.gotoBottom()
		return
	case key.Matches(msg, keyTop):
		d.following = false
		d.log.gotoTop()
		return
	}
	km := d.log.keys
	if key.Matches(msg, km.Up, km.PageUp, km.HalfPageUp) {
		d.following = false
	}
	d.log.update(msg)
}

// whyNot says why this identity cannot approve or reject the run now ("" if
// it can).
func (d *runDetail) whyNot() string {
	switch {
	case !d.hasProposal():
		return "this run holds no proposal"
	case d.run.Proposal.Stale:
		return "this plan is stale: it can never apply, so it cannot be approved" + d.rerunHint()
	case d.run.Proposal.Unapprovable != "":
		return "this run cannot be approved: " + d.run.Proposal.Unapprovable
	case !d.env.id.CanApprove:
		return "you cannot approve or reject: your identity has no approve role"
	case d.run.Status != "awaiting_approval":
		return "run " + d.runID + " " + statusSaid(d.status()) + ": only a held proposal is approved or rejected"
	case !d.run.WaitingForMe && !d.run.Agent && !d.run.Forge && d.run.Requester == d.env.id.Name:
		return "you asked for this run: a requester does not release their own proposal; " + d.waitsForPhrase()
	case !d.run.WaitingForMe:
		return "this proposal is not waiting for you: " + d.waitsForPhrase()
	}
	return ""
}

// waitsForPhrase says whom the rules still holding the proposal wait for.
func (d *runDetail) waitsForPhrase() string {
	var who []string
	for _, h := range d.run.Proposal.Holds {
		if h.ReleasedBy == "" {
			who = append(who, cleanLine(h.Rule)+" waits for "+waitsFor(h))
		}
	}
	if len(who) == 0 {
		return "nothing of it waits for you"
	}
	return strings.Join(who, "; ")
}

// rerunHint points at the rerun key when it is offered.
func (d *runDetail) rerunHint() string {
	if d.rerunnable() {
		return "; R reruns it with the same answers"
	}
	return ""
}

func (d *runDetail) whyNoCancel() string {
	if d.cancellable() {
		return ""
	}
	return "run " + d.runID + " " + statusSaid(d.status()) + ": only a queued, running or held run can be cancelled"
}

func (d *runDetail) whyNoRerun() string {
	switch {
	case d.rerunnable():
		return ""
	case d.run != nil && !d.env.id.CanLaunch:
		return "you cannot rerun: your identity has no launch role"
	}
	return "run " + d.runID + " " + statusSaid(d.status()) + ": only a stale, failed, rejected, cancelled or interrupted run is rerun"
}

// reconcilable reports whether the console offers to propose a reconcile:
// the run is a check the server says can be reconciled now, and the
// identity may launch.
func (d *runDetail) reconcilable() bool { return d.whyNoReconcile() == "" }

// whyNoReconcile says why no reconcile can be proposed from the run ("" if
// one can): the server's sentence for a check that cannot be reconciled.
func (d *runDetail) whyNoReconcile() string {
	switch {
	case d.run == nil || d.run.Check == nil:
		return "run " + d.runID + " is not a drift check: a reconcile is proposed from a check that kept a plan"
	case !d.env.id.CanLaunch:
		return "you cannot propose a reconcile: your identity has no launch role"
	case !d.run.Check.Reconcilable:
		return "no reconcile: " + cleanSentence(d.run.Check.Reconcile)
	}
	return ""
}
