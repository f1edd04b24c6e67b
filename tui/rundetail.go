package tui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// Run detail messages; gen tells one opened detail from the next.
type (
	detailWatchMsg struct {
		gen int
		ch  <-chan struct{}
	}
	detailTickMsg struct {
		gen    int
		ch     <-chan struct{}
		closed bool
	}
	detailRunMsg struct {
		gen, seq int
		d        RunDetail
		err      error
	}
	logStartMsg struct {
		gen int
		ch  <-chan LogChunk
		err error
	}
	logChunksMsg struct {
		gen    int
		ch     <-chan LogChunk
		chunks []LogChunk
		ended  bool
	}
	// actionDoneMsg is the Backend's answer to an approve, reject, cancel,
	// rerun or reconcile the user confirmed.
	actionDoneMsg struct {
		gen    int
		act    action
		digest string // the digest an approval released
		newID  string // the run a rerun started, or the reconcile proposed
		err    error
	}
)

func (detailWatchMsg) target() screenID { return screenDetail }
func (detailTickMsg) target() screenID  { return screenDetail }
func (detailRunMsg) target() screenID   { return screenDetail }
func (logStartMsg) target() screenID    { return screenDetail }
func (logChunksMsg) target() screenID   { return screenDetail }
func (actionDoneMsg) target() screenID  { return screenDetail }

// action is what the user asked the Backend to do to the run.
type action int

const (
	actApprove action = iota
	actReject
	actCancel
	actRerun
	actReconcile
)

const (
	paneLog = iota
	paneProposal
)

const (
	modeNormal = iota
	modeConfirm
	modeReason
	modeBusy
	modeConfirmCancel
	modeConfirmRerun
	modeConfirmReconcile
	modeFilter // typing the change view's address filter
)

// maxDrain is how many already-waiting log chunks one message carries.
const maxDrain = 256

// runDetail shows one run: header, live log and, when the run holds one, its
// proposal with approval and rejection.
type runDetail struct {
	env
	runID  string
	gen    int
	ctx    context.Context
	cancel context.CancelFunc
	h      int

	run      *RunDetail
	loadErr  error
	seq      int
	applied  int
	propSeen string // panelID of the proposal or check last rendered

	// log
	log       logView
	san       sanitizer
	next      int64 // offset of the first log byte not yet applied
	following bool
	logEnded  bool
	// endedAt is the run's status when its log ended; a later status
	// (an approval released a held run) follows the log again.
	endedAt string
	logErr  error

	// prop is the proposal (or check) pane; plan keeps its plan text
	// cleaned and measured, and propHead is the text above the plan it
	// shows, so a refresh that changed neither leaves the pane as it is.
	prop     logView
	plan     planLines
	propHead string
	pane     int
	// changes is the proposal pane on the change view, for a proposal
	// that carries its change set (nil otherwise, or before it is shown);
	// tofuText shows tofu's own rendering (prop) instead.
	changes  *changePane
	tofuText bool
	filterIn textinput.Model

	mode          int
	confirmDigest string
	reason        textinput.Model
	notice        string
	noticeIsErr   bool
	help          help.Model
}

func newRunDetail(e env, id string, gen int) *runDetail {
	ctx, cancel := context.WithCancel(e.ctx)
	d := &runDetail{env: e, runID: id, gen: gen, ctx: ctx, cancel: cancel, following: true, help: newHelp(e.st)}
	d.log = newLogView()
	d.prop = newWordView()
	d.reason = textinput.New()
	d.reason.Prompt = "reason: "
	d.reason.Placeholder = "why this proposal is turned down (optional)"
	d.reason.CharLimit = 500
	d.filterIn = textinput.New()
	d.filterIn.Prompt = "filter by address: "
	d.filterIn.Placeholder = "part of an address, e.g. module.network"
	d.filterIn.CharLimit = 200
	if e.st.noColor {
		d.reason.SetStyles(textinput.Styles{Cursor: textinput.CursorStyle{Blink: true}})
		d.filterIn.SetStyles(textinput.Styles{Cursor: textinput.CursorStyle{Blink: true}})
	}
	return d
}

// Close stops the detail's subscriptions (log follow, run watch).
func (d *runDetail) Close() { d.cancel() }

func (d *runDetail) Typing() bool { return d.mode == modeReason || d.mode == modeFilter }

func (d *runDetail) SetSize(w, h int) {
	d.width, d.h = w, h
	d.help.SetWidth(w)
	d.reason.SetWidth(max(10, w-14))
	d.filterIn.SetWidth(max(10, w-24))
	d.renderProposal(true)
	d.layout()
}

func (d *runDetail) Init() tea.Cmd {
	b, ctx, gen := d.b, d.ctx, d.gen
	watch := func() tea.Msg { return detailWatchMsg{gen: gen, ch: b.WatchRuns(ctx)} }
	return tea.Batch(watch, d.followFrom(0))
}

// followFrom follows the run's log from byte offset from.
func (d *runDetail) followFrom(from int64) tea.Cmd {
	b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
	return func() tea.Msg {
		ch, err := b.FollowLog(ctx, id, from)
		return logStartMsg{gen: gen, ch: ch, err: err}
	}
}

func (d *runDetail) fetch() tea.Cmd {
	d.seq++
	seq, b, ctx, gen, id := d.seq, d.b, d.ctx, d.gen, d.runID
	return func() tea.Msg {
		r, err := b.Run(ctx, id)
		return detailRunMsg{gen: gen, seq: seq, d: r, err: err}
	}
}

func (d *runDetail) waitTick(ch <-chan struct{}) tea.Cmd {
	gen := d.gen
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return detailTickMsg{gen: gen, closed: true}
		}
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					return detailTickMsg{gen: gen, closed: true}
				}
			default:
				return detailTickMsg{gen: gen, ch: ch}
			}
		}
	}
}

// readLog waits for the next chunk and takes those already waiting with it.
func (d *runDetail) readLog(ch <-chan LogChunk) tea.Cmd {
	gen := d.gen
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return logChunksMsg{gen: gen, ended: true}
		}
		msg := logChunksMsg{gen: gen, ch: ch, chunks: []LogChunk{c}}
		for len(msg.chunks) < maxDrain {
			select {
			case c, ok := <-ch:
				if !ok {
					msg.ended = true
					return msg
				}
				msg.chunks = append(msg.chunks, c)
			default:
				return msg
			}
		}
		return msg
	}
}

// applyChunk appends the part of c not applied yet: a chunk that ends at or
// before what was applied is a duplicate and ignored, an overlapping one is
// trimmed, and a gap is marked in the log rather than hidden.
func (d *runDetail) applyChunk(c LogChunk) {
	end := c.Offset + int64(len(c.Data))
	if end <= d.next {
		return
	}
	data := c.Data
	switch {
	case c.Offset < d.next:
		data = data[d.next-c.Offset:]
	case c.Offset > d.next:
		d.san = sanitizer{}
		d.log.appendText(fmt.Sprintf("\n[log bytes %d to %d were not received]\n", d.next, c.Offset))
	}
	d.log.appendText(d.san.write(data))
	d.next = end
}

// status is the run's status, or "loading" before it is known.
func (d *runDetail) status() string {
	if d.run == nil {
		return "loading"
	}
	return d.run.Status
}

// statusSaid is how a sentence says a run is in status s, after the run
// ("run 7 …"): "is" before a status it stands in (queued, running,
// awaiting approval, stale, or loading before it is known), and what
// became of it for the others: "succeeded", "failed", "was cancelled",
// "was interrupted", "was rejected", "was refused". Another status is
// "is " and the status.
func statusSaid(s string) string {
	switch s {
	case "succeeded", "failed":
		return s
	case "cancelled", "interrupted", "rejected", "refused":
		return "was " + s
	}
	return "is " + strings.ReplaceAll(s, "_", " ")
}

// cancellable reports whether the run is in a state a cancel can stop.
func (d *runDetail) cancellable() bool {
	switch d.status() {
	case "queued", "running", "awaiting_approval":
		return true
	}
	return false
}

// rerunnable reports whether the console offers a rerun: the run ended
// without applying (stale, failed, rejected, cancelled, interrupted), and
// the identity may launch.
func (d *runDetail) rerunnable() bool {
	if d.run == nil || !d.env.id.CanLaunch {
		return false
	}
	if d.run.Stale || (d.run.Proposal != nil && d.run.Proposal.Stale) {
		return true
	}
	switch d.run.Status {
	case "stale", "failed", "rejected", "cancelled", "interrupted":
		return true
	}
	return false
}

// executing reports whether the run is queued or running: it opens on its
// log, which is where something happens.
func (d *runDetail) executing() bool {
	s := d.status()
	return s == "queued" || s == "running"
}

// hasProposal reports whether the run holds a proposal to show.
func (d *runDetail) hasProposal() bool { return d.run != nil && d.run.Proposal != nil }

// hasCheck reports whether the run is a drift check to show (and holds no
// proposal, which would be shown instead).
func (d *runDetail) hasCheck() bool {
	return d.run != nil && d.run.Check != nil && d.run.Proposal == nil
}

// hasPanel reports whether the run has a second pane beside the log: its
// proposal or what its check found (once it recorded a finding).
func (d *runDetail) hasPanel() bool { return d.hasProposal() || (d.hasCheck() && d.run.Check.Finished) }

// panelID names what the panel shows: the proposal's digest, "check" once
// a check recorded its finding, "" when there is nothing to show.
func (d *runDetail) panelID() string {
	switch {
	case d.hasProposal():
		return d.run.Proposal.Digest
	case d.hasCheck() && d.run.Check.Finished:
		return "check"
	}
	return ""
}

// canAct reports whether approve and reject are offered: a proposal that is
// not stale waits for this identity.
func (d *runDetail) canAct() bool { return d.whyNot() == "" }

func (d *runDetail) Update(msg tea.Msg) tea.Cmd {
	cmd := d.update(msg)
	d.layout()
	return cmd
}

func (d *runDetail) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case detailWatchMsg:
		return d.onWatch(msg)
	case detailTickMsg:
		if msg.gen != d.gen || msg.closed {
			return nil
		}
		return tea.Batch(d.fetch(), d.waitTick(msg.ch))
	case detailRunMsg:
		return d.onRun(msg)
	case logStartMsg:
		return d.onLogStart(msg)
	case logChunksMsg:
		return d.onLogChunks(msg)
	case actionDoneMsg:
		return d.onDone(msg)
	case tea.KeyPressMsg:
		return d.key(msg)
	}
	switch d.mode {
	case modeReason:
		var cmd tea.Cmd
		d.reason, cmd = d.reason.Update(msg)
		return cmd
	case modeFilter:
		var cmd tea.Cmd
		d.filterIn, cmd = d.filterIn.Update(msg)
		return cmd
	}
	return nil
}

func (d *runDetail) onWatch(msg detailWatchMsg) tea.Cmd {
	switch {
	case msg.gen != d.gen:
		return nil
	case msg.ch == nil:
		return d.fetch()
	}
	return tea.Batch(d.fetch(), d.waitTick(msg.ch))
}

func (d *runDetail) onRun(msg detailRunMsg) tea.Cmd {
	if msg.gen != d.gen || msg.seq < d.applied {
		return nil
	}
	d.applied = msg.seq
	d.loadErr = msg.err
	if msg.err != nil {
		return nil
	}
	r := msg.d
	d.run = &r
	d.onProposalChange()
	if d.logEnded && r.Status != d.endedAt {
		d.logEnded = false
		return d.followFrom(d.next)
	}
	return nil
}

func (d *runDetail) onLogStart(msg logStartMsg) tea.Cmd {
	switch {
	case msg.gen != d.gen:
		return nil
	case msg.err != nil:
		d.logErr = msg.err
		return nil
	}
	return d.readLog(msg.ch)
}

func (d *runDetail) onLogChunks(msg logChunksMsg) tea.Cmd {
	if msg.gen != d.gen {
		return nil
	}
	// The cost is the new text's: the sanitizer and the log view work on
	// what arrived only, however long the log already is.
	for _, c := range msg.chunks {
		d.applyChunk(c)
	}
	if !msg.ended {
		return d.readLog(msg.ch)
	}
	d.logEnded = true
	d.endedAt = ""
	if d.run != nil {
		d.endedAt = d.run.Status
	}
	return d.fetch()
}

// onDone shows the Backend's answer to a confirmed action; a rerun that
// started a run opens it.
func (d *runDetail) onDone(msg actionDoneMsg) tea.Cmd {
	if msg.gen != d.gen {
		return nil
	}
	d.mode = modeNormal
	if msg.err != nil {
		d.setNotice(failedWord[msg.act]+cleanLine(msg.err.Error()), true)
		return d.fetch()
	}
	switch msg.act {
	case actApprove:
		d.setNotice("released "+msg.digest, false)
	case actReject:
		d.setNotice("proposal rejected", false)
	case actCancel:
		d.setNotice("cancel sent: run "+d.runID+" stops (a running tool is interrupted first)", false)
	case actRerun, actReconcile:
		id := msg.newID
		return func() tea.Msg { return openRunMsg{id: id} }
	}
	return d.fetch()
}

// failedWord starts the notice of a refused action.
var failedWord = map[action]string{
	actApprove:   "approval refused: ",
	actReject:    "rejection failed: ",
	actCancel:    "cancel refused: ",
	actRerun:     "rerun refused: ",
	actReconcile: "reconcile refused: ",
}

func (d *runDetail) setNotice(s string, isErr bool) {
	d.notice, d.noticeIsErr = cleanLine(s), isErr
}

// onProposalChange re-renders the proposal after a refresh of the run and
// drops a confirmation the refresh made pointless: an approval whose digest
// is no longer the one held (or whose plan went stale), a cancel of a run
// that ended, a rejection of a proposal no longer held.
func (d *runDetail) onProposalChange() {
	digest := ""
	if d.run.Proposal != nil {
		digest = d.run.Proposal.Digest
	}
	d.dropStaleDialog(digest)
	panel := d.panelID()
	if panel == d.propSeen {
		d.renderProposal(true)
		return
	}
	if d.propSeen == "" && panel != "" && !d.executing() {
		d.pane = paneProposal
	}
	if panel == "" {
		d.pane = paneLog
	}
	d.propSeen = panel
	d.changes, d.tofuText = nil, false
	if d.mode == modeFilter {
		d.mode = modeNormal
		d.filterIn.Blur()
	}
	d.renderProposal(false)
	d.prop.gotoTop()
}

func (d *runDetail) dropStaleDialog(digest string) {
	switch {
	case d.mode == modeConfirm && digest != d.confirmDigest:
		d.mode = modeNormal
		d.setNotice("the proposal changed while you were confirming: review it again", true)
	case d.mode == modeConfirm && d.run.Proposal.Stale:
		d.mode = modeNormal
		d.setNotice("the plan went stale while you were confirming: it can never apply", true)
	case d.mode == modeConfirmCancel && !d.cancellable():
		d.mode = modeNormal
		d.setNotice("run "+d.runID+" ended while you were confirming ("+d.run.Status+"): nothing to cancel", true)
	case d.mode == modeConfirmReconcile && d.whyNoReconcile() != "":
		d.mode = modeNormal
		d.setNotice("the check changed while you were confirming: "+d.whyNoReconcile(), true)
	case d.mode == modeReason && digest == "":
		d.mode = modeNormal
		d.reason.Blur()
		d.setNotice("the proposal is no longer held", true)
	}
}
