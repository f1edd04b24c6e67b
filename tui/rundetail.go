package tui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
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
	approveDoneMsg struct {
		gen    int
		digest string
		err    error
	}
	rejectDoneMsg struct {
		gen int
		err error
	}
	cancelDoneMsg struct {
		gen int
		err error
	}
)

func (detailWatchMsg) target() screenID { return screenDetail }
func (detailTickMsg) target() screenID  { return screenDetail }
func (detailRunMsg) target() screenID   { return screenDetail }
func (logStartMsg) target() screenID    { return screenDetail }
func (logChunksMsg) target() screenID   { return screenDetail }
func (approveDoneMsg) target() screenID { return screenDetail }
func (rejectDoneMsg) target() screenID  { return screenDetail }
func (cancelDoneMsg) target() screenID  { return screenDetail }

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
	propSeen string // digest of the proposal last rendered

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

	propVP viewport.Model
	pane   int

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
	d.propVP = viewport.New()
	d.propVP.SoftWrap = true
	d.reason = textinput.New()
	d.reason.Prompt = "reason: "
	d.reason.Placeholder = "why this proposal is turned down (optional)"
	d.reason.CharLimit = 500
	if e.st.noColor {
		d.reason.SetStyles(textinput.Styles{Cursor: textinput.CursorStyle{Blink: true}})
	}
	return d
}

// Close stops the detail's subscriptions (log follow, run watch).
func (d *runDetail) Close() { d.cancel() }

func (d *runDetail) Typing() bool { return d.mode == modeReason }

func (d *runDetail) SetSize(w, h int) {
	d.width, d.h = w, h
	d.help.SetWidth(w)
	d.reason.SetWidth(max(10, w-14))
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

// cancellable reports whether the run is in a state a cancel can stop.
func (d *runDetail) cancellable() bool {
	if d.run == nil {
		return false
	}
	switch d.run.Status {
	case "queued", "running", "awaiting_approval":
		return true
	}
	return false
}

func (d *runDetail) canAct() bool {
	return d.run != nil && d.run.Proposal != nil && d.env.id.CanApprove && d.run.WaitingForMe
}

func (d *runDetail) Update(msg tea.Msg) tea.Cmd {
	cmd := d.update(msg)
	d.layout()
	return cmd
}

func (d *runDetail) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case detailWatchMsg:
		if msg.gen != d.gen {
			return nil
		}
		if msg.ch == nil {
			return d.fetch()
		}
		return tea.Batch(d.fetch(), d.waitTick(msg.ch))
	case detailTickMsg:
		if msg.gen != d.gen || msg.closed {
			return nil
		}
		return tea.Batch(d.fetch(), d.waitTick(msg.ch))
	case detailRunMsg:
		if msg.gen != d.gen || msg.seq < d.applied {
			return nil
		}
		d.applied = msg.seq
		d.loadErr = msg.err
		if msg.err == nil {
			r := msg.d
			d.run = &r
			d.onProposalChange()
			if d.logEnded && r.Status != d.endedAt {
				d.logEnded = false
				return d.followFrom(d.next)
			}
		}
		return nil
	case logStartMsg:
		if msg.gen != d.gen {
			return nil
		}
		if msg.err != nil {
			d.logErr = msg.err
			return nil
		}
		return d.readLog(msg.ch)
	case logChunksMsg:
		if msg.gen != d.gen {
			return nil
		}
		// The cost is the new text's: the sanitizer and the log view work
		// on what arrived only, however long the log already is.
		for _, c := range msg.chunks {
			d.applyChunk(c)
		}
		if msg.ended {
			d.logEnded = true
			d.endedAt = ""
			if d.run != nil {
				d.endedAt = d.run.Status
			}
			return d.fetch()
		}
		return d.readLog(msg.ch)
	case approveDoneMsg:
		if msg.gen != d.gen {
			return nil
		}
		d.mode = modeNormal
		if msg.err != nil {
			d.setNotice("approval refused: "+msg.err.Error(), true)
		} else {
			d.setNotice("released "+msg.digest, false)
		}
		return d.fetch()
	case rejectDoneMsg:
		if msg.gen != d.gen {
			return nil
		}
		d.mode = modeNormal
		if msg.err != nil {
			d.setNotice("rejection failed: "+msg.err.Error(), true)
		} else {
			d.setNotice("proposal rejected", false)
		}
		return d.fetch()
	case cancelDoneMsg:
		if msg.gen != d.gen {
			return nil
		}
		d.mode = modeNormal
		if msg.err != nil {
			d.setNotice("cancel refused: "+msg.err.Error(), true)
		} else {
			d.setNotice("cancel sent: run "+d.runID+" stops (a running tool is interrupted first)", false)
		}
		return d.fetch()
	case tea.KeyPressMsg:
		return d.key(msg)
	}
	if d.mode == modeReason {
		var cmd tea.Cmd
		d.reason, cmd = d.reason.Update(msg)
		return cmd
	}
	return nil
}

func (d *runDetail) setNotice(s string, isErr bool) {
	d.notice, d.noticeIsErr = cleanLine(s), isErr
}

// onProposalChange re-renders the proposal after a refresh of the run, drops
// an approval confirmation whose digest is no longer the one held, and a
// cancel confirmation of a run that ended meanwhile.
func (d *runDetail) onProposalChange() {
	digest := ""
	if d.run.Proposal != nil {
		digest = d.run.Proposal.Digest
	}
	if d.mode == modeConfirm && digest != d.confirmDigest {
		d.mode = modeNormal
		d.setNotice("the proposal changed while you were confirming: review it again", true)
	}
	if d.mode == modeConfirmCancel && !d.cancellable() {
		d.mode = modeNormal
		d.setNotice("run "+d.runID+" ended while you were confirming ("+d.run.Status+"): nothing to cancel", true)
	}
	if d.mode == modeReason && digest == "" {
		d.mode = modeNormal
		d.reason.Blur()
		d.setNotice("the proposal is no longer held", true)
	}
	if digest != d.propSeen {
		if d.propSeen == "" && digest != "" {
			d.pane = paneProposal
		}
		if digest == "" {
			d.pane = paneLog
		}
		d.propSeen = digest
		d.renderProposal(false)
		d.propVP.GotoTop()
	} else {
		d.renderProposal(true)
	}
}

func (d *runDetail) key(msg tea.KeyPressMsg) tea.Cmd {
	switch d.mode {
	case modeBusy:
		return nil
	case modeConfirm:
		switch {
		case key.Matches(msg, keyYes):
			digest := d.confirmDigest
			d.mode = modeBusy
			b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
			return func() tea.Msg {
				return approveDoneMsg{gen: gen, digest: digest, err: b.Approve(ctx, id, digest)}
			}
		case key.Matches(msg, keyNo):
			d.mode = modeNormal
			d.setNotice("approval cancelled", false)
		}
		return nil
	case modeConfirmCancel:
		switch {
		case key.Matches(msg, keyCancelYes):
			d.mode = modeBusy
			b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
			return func() tea.Msg { return cancelDoneMsg{gen: gen, err: b.Cancel(ctx, id)} }
		case key.Matches(msg, keyCancelNo):
			d.mode = modeNormal
			d.setNotice("run "+d.runID+" kept", false)
		}
		return nil
	case modeReason:
		switch {
		case key.Matches(msg, keySubmit):
			reason := strings.TrimSpace(d.reason.Value())
			d.mode = modeBusy
			d.reason.Blur()
			b, ctx, gen, id := d.b, d.ctx, d.gen, d.runID
			return func() tea.Msg { return rejectDoneMsg{gen: gen, err: b.Reject(ctx, id, reason)} }
		case key.Matches(msg, keyCancel):
			d.mode = modeNormal
			d.reason.Blur()
			return nil
		}
		var cmd tea.Cmd
		d.reason, cmd = d.reason.Update(msg)
		return cmd
	}

	switch {
	case key.Matches(msg, keyBack):
		return func() tea.Msg { return backMsg{} }
	case key.Matches(msg, keyPane):
		if d.run != nil && d.run.Proposal != nil {
			d.pane = 1 - d.pane
		}
		return nil
	case key.Matches(msg, keyApprove):
		if why := d.whyNot(); why != "" {
			d.setNotice(why, true)
			return nil
		}
		d.confirmDigest = d.run.Proposal.Digest
		d.mode = modeConfirm
		d.notice = ""
		return nil
	case key.Matches(msg, keyReject):
		if why := d.whyNot(); why != "" {
			d.setNotice(why, true)
			return nil
		}
		d.mode = modeReason
		d.notice = ""
		d.reason.Reset()
		return d.reason.Focus()
	case key.Matches(msg, keyCancelRun):
		if !d.cancellable() {
			status := "loading"
			if d.run != nil {
				status = d.run.Status
			}
			d.setNotice("run "+d.runID+" is "+status+": only a queued, running or held run can be cancelled", true)
			return nil
		}
		d.mode = modeConfirmCancel
		d.notice = ""
		return nil
	}

	if d.pane == paneProposal && d.run != nil && d.run.Proposal != nil {
		if key.Matches(msg, keyTop) {
			d.propVP.GotoTop()
		} else if key.Matches(msg, keyFollow) {
			d.propVP.GotoBottom()
		} else {
			d.propVP, _ = d.propVP.Update(msg)
		}
		return nil
	}
	switch {
	case key.Matches(msg, keyFollow):
		d.following = true
		d.log.gotoBottom()
		return nil
	case key.Matches(msg, keyTop):
		d.following = false
		d.log.gotoTop()
		return nil
	}
	km := d.log.keys
	if key.Matches(msg, km.Up, km.PageUp, km.HalfPageUp) {
		d.following = false
	}
	d.log.update(msg)
	return nil
}

// whyNot says why this identity cannot act on the run now ("" if it can).
func (d *runDetail) whyNot() string {
	switch {
	case d.run == nil || d.run.Proposal == nil:
		return "this run holds no proposal"
	case !d.env.id.CanApprove:
		return "you cannot approve or reject: your identity has no approve role"
	case !d.run.WaitingForMe:
		return "this proposal is not waiting for you"
	}
	return ""
}

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
	line := "status: " + cleanLine(r.Status)
	if r.ExitCode != 0 {
		line += fmt.Sprintf(" (exit %d)", r.ExitCode)
	}
	if r.WaitingForMe && r.Proposal != nil {
		line += " " + st.waiting.Render("▶ waiting for you")
	}
	line += "   requester: " + requester(r.Requester, r.Agent)
	line += "   age: " + age(d.now().Sub(r.CreatedAt))
	b.WriteString(line + "\n")
	cmd := "command: " + cleanLine(r.Command)
	if r.Tool != "" {
		cmd += " (" + cleanLine(r.Tool) + ")"
	}
	if r.Project != "" {
		cmd += "   project: " + cleanLine(r.Project)
	}
	b.WriteString(trunc(cmd, d.width) + "\n")
	if r.Message != "" {
		b.WriteString(trunc("message: "+cleanLine(r.Message), d.width) + "\n")
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
	return b.String()
}

// summary is the fixed proposal block: the destroy count first and large.
func (d *runDetail) summary(p *Proposal) string {
	st := d.st
	var lines []string
	var big string
	if p.Stage == "request" {
		big = st.box.Render("HELD BEFORE PLANNING")
		lines = append(lines, "nothing is planned yet: releasing it lets it plan,",
			"and the apply its plan proposes is held again")
	} else {
		bs := st.box
		if p.Destroy > 0 {
			bs = st.destroy
		}
		big = bs.Render(fmt.Sprintf("DESTROYS %d", p.Destroy))
		lines = append(lines, fmt.Sprintf("adds %d · changes %d · replaces %d · forgets %d",
			p.Add, p.Change, p.Replace, p.Forget))
		var rules []string
		for _, h := range p.Holds {
			rules = append(rules, cleanLine(h.Rule))
		}
		held := "held by: " + strings.Join(rules, ", ")
		if len(rules) == 0 {
			held = "no rule held it"
		}
		lines = append(lines, held)
	}
	side := lipgloss.NewStyle().PaddingLeft(2).Render(strings.Join(lines, "\n"))
	var b strings.Builder
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, big, side) + "\n")
	b.WriteString(trunc("requested: "+cleanLine(p.Requested), d.width) + "\n")
	b.WriteString(wrapHard("digest: "+cleanLine(p.Digest), d.width) + "\n")
	return b.String()
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

// renderProposal fills the proposal pane: rules, findings, addresses by
// action and the masked plan text. keep keeps the scroll position.
func (d *runDetail) renderProposal(keep bool) {
	if d.run == nil || d.run.Proposal == nil {
		d.propVP.SetContent("")
		return
	}
	p := d.run.Proposal
	st := d.st
	var b strings.Builder
	if p.Stage != "request" {
		b.WriteString(st.label.Render("Resources by action") + "\n")
		keys := make([]string, 0, len(p.Addresses))
		seen := map[string]bool{}
		for _, k := range actionOrder {
			if len(p.Addresses[k]) > 0 {
				keys = append(keys, k)
				seen[k] = true
			}
		}
		var other []string
		for k, v := range p.Addresses {
			if !seen[k] && len(v) > 0 {
				other = append(other, k)
			}
		}
		sort.Strings(other)
		keys = append(keys, other...)
		if len(keys) == 0 {
			b.WriteString("  no resource changes\n")
		}
		for _, k := range keys {
			head := fmt.Sprintf("  %s (%d)", cleanLine(k), len(p.Addresses[k]))
			if k == "destroy" {
				head = st.danger.Render(head)
			}
			b.WriteString(head + "\n")
			mark := actionMark[k]
			if mark == "" {
				mark = "*"
			}
			for _, a := range p.Addresses[k] {
				b.WriteString("    " + mark + " " + cleanLine(a) + "\n")
			}
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	if len(p.Holds) > 0 {
		b.WriteString(st.label.Render("Why it is held") + "\n")
	}
	for _, h := range p.Holds {
		b.WriteString("  • " + cleanLine(h.Rule) + ": " + cleanLine(h.Reason) + "\n")
	}
	// Findings come from the configuration scan; a proposal without any
	// shows no section, rather than claiming a scan found nothing.
	if len(p.Findings) > 0 {
		b.WriteString("\n" + st.label.Render(fmt.Sprintf("Scan findings (%d)", len(p.Findings))) + "\n")
	}
	for _, f := range p.Findings {
		b.WriteString("  ! " + cleanLine(f.Address) + "\n      " + cleanLine(f.Reason) + "\n")
	}
	b.WriteString("\n" + st.label.Render("Plan (tofu's rendering, masked)") + "\n")
	if p.PlanText == "" {
		b.WriteString("  (no plan text)\n")
	} else {
		b.WriteString(strings.TrimRight(clean(p.PlanText), "\n") + "\n")
	}
	y := d.propVP.YOffset()
	d.propVP.SetContent(strings.TrimRight(b.String(), "\n"))
	if keep {
		d.propVP.SetYOffset(y)
	}
}

func (d *runDetail) bottom() string {
	st := d.st
	var b strings.Builder
	switch d.mode {
	case modeConfirm:
		p := d.run.Proposal
		var body strings.Builder
		body.WriteString(st.label.Render("Release this proposal of run "+cleanLine(d.runID)+"?") + "\n")
		inner := max(20, d.width-4)
		body.WriteString(wrapHard(d.confirmDigest, inner) + "\n")
		if p.Stage == "request" {
			body.WriteString("it plans next; its apply is held again for approval\n")
		} else {
			body.WriteString(st.danger.Render(fmt.Sprintf("DESTROYS %d", p.Destroy)) +
				fmt.Sprintf(" · adds %d · changes %d · replaces %d · forgets %d", p.Add, p.Change, p.Replace, p.Forget) + "\n")
			body.WriteString("the apply carries exactly the saved plan with this digest\n")
		}
		body.WriteString("y release this digest · n/esc cancel")
		b.WriteString(st.box.Render(body.String()) + "\n")
	case modeConfirmCancel:
		b.WriteString(st.box.Render(st.label.Render("Cancel run "+cleanLine(d.runID)+"?")+
			" a running tool gets an interrupt first\ny cancel · n/esc keep") + "\n")
	case modeReason:
		b.WriteString(st.label.Render("Reject the proposal of run "+cleanLine(d.runID)) + "\n")
		b.WriteString(d.reason.View() + "\n")
	case modeBusy:
		b.WriteString("sending…\n")
	default:
		status := ""
		if d.pane == paneLog || d.run == nil || d.run.Proposal == nil {
			switch {
			case d.logErr != nil:
				status = st.err.Render("! log unavailable: " + cleanLine(d.logErr.Error()))
			case d.following && d.logEnded:
				status = "— end of log —"
			case d.following:
				status = "following the log"
			default:
				line, _ := d.log.lineAt(d.log.top)
				status = "paused at line " + fmt.Sprint(line+1) + " — G to follow"
				if d.logEnded {
					status += " (log ended)"
				}
			}
		} else {
			status = fmt.Sprintf("proposal %3.0f%%", d.propVP.ScrollPercent()*100)
		}
		b.WriteString(st.faint.Render(status) + "\n")
		if d.notice != "" {
			if d.noticeIsErr {
				b.WriteString(st.err.Render(trunc("! "+d.notice, d.width)) + "\n")
			} else {
				b.WriteString(st.ok.Render(trunc(d.notice, d.width)) + "\n")
			}
		}
	}
	b.WriteString(d.help.View(d.keys()))
	return b.String()
}

func (d *runDetail) keys() bindings {
	switch d.mode {
	case modeConfirm:
		return bindings{keyYes, keyNo}
	case modeConfirmCancel:
		return bindings{keyCancelYes, keyCancelNo}
	case modeReason:
		return bindings{keySubmit, keyCancel, keyCtrlC}
	case modeBusy:
		return bindings{keyCtrlC}
	}
	b := bindings{keyBack, keyScroll}
	if d.run != nil && d.run.Proposal != nil {
		b = append(b, keyPane)
		if d.canAct() {
			b = append(b, keyApprove, keyReject)
		}
	}
	if d.cancellable() {
		b = append(b, keyCancelRun)
	}
	if d.pane == paneLog || d.run == nil || d.run.Proposal == nil {
		b = append(b, keyFollow)
	}
	return append(b, keyQuit)
}

// layout sizes the viewports to the space between top and bottom.
func (d *runDetail) layout() {
	h := d.h - lipgloss.Height(d.top()) - lipgloss.Height(d.bottom())
	h = max(1, h)
	d.propVP.SetWidth(d.width)
	d.propVP.SetHeight(h)
	d.log.setSize(d.width, h)
	if d.following {
		d.log.gotoBottom()
	}
}

func (d *runDetail) View() string {
	body := d.log.view()
	if d.pane == paneProposal && d.run != nil && d.run.Proposal != nil {
		body = d.propVP.View()
	}
	top := strings.TrimSuffix(d.top(), "\n")
	return top + "\n" + body + "\n" + d.bottom()
}
