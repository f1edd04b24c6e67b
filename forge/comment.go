package forge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// maxLine is the most bytes of one escaped line a fenced block shows (a
// message's line, a difference); a longer line is cut, never inside an
// escape, and ends with "…".
const maxLine = 1000

// maxNote is the most bytes of the note's escaped sentence.
const maxNote = 2000

// RenderComment is r as the markdown body of Switchtender's one comment
// on a pull request, for GitHub, Gitea and GitLab alike, of at most limit
// bytes (Client.CommentLimit(); CommentLimit for every forge), valid
// UTF-8, ended by a newline. In order:
//
//   - CommentMarker on its own line, and a title naming the head (its
//     short SHA) and the pull request's number;
//   - per template of r.Plans, by template name: a heading with the
//     template, the status in the store's words ("planned" for a dry run
//     that succeeded) and the run; for a saved plan its counts
//     (screentext.PlanCounts) and its digest in full, and the risk-first
//     planview.Summary of its change set in a fenced block; for a refusal
//     each scan finding, address (file:line): reason; for another end the
//     run's message; then the `ssh … show N` command for the rest;
//   - r.Superseded, the older heads, briefly;
//   - once r.MergeSHA is set, the applies: per template its status,
//     counts, digest, the `ssh … approve N --digest sha256:…` command
//     while it awaits approval, who approved or rejected it, stale and
//     why, and how its change set compares with the plan last shown;
//   - r.Note as a paragraph, and a closing line: approvals happen over
//     SSH with the digest, never by a comment.
//
// Every value (names, addresses, files, messages, reasons, logins, the
// summary's lines) passes through screentext and then through the
// markdown escaping (mdCode, mdText, mdFence), so no hidden character
// reaches the forge raw and no value can change the comment's markdown.
//
// The limit is shared between the templates' sections (see layout): a
// section that needs less than an even share is shown whole, the others
// are cut to the same size, their summary, findings, message and
// differences by whole lines and items, saying how many were left out
// and the command for the rest; when even a section's heading and
// commands do not fit, it and every section after it are left out for one
// line saying how many and `ssh … runs`. The note takes at most a quarter
// of the limit, the superseded heads a quarter of what is left.
// Nothing is ever cut inside a UTF-8 sequence, an escape, a code span or
// a fence. A limit too small for the marker, the title and the closing
// line gets the whole lines of those that fit (possibly none: "").
func RenderComment(r Report, limit int) string {
	c := comment{r: r, ssh: sshPrefix(r.SSH)}
	return c.render(limit)
}

// comment renders one Report.
type comment struct {
	r   Report
	ssh string // r.SSH escaped with screentext.Field (cut to maxValue), or "ssh …"
}

// sshPrefix is the escaped start of every command the comment shows.
func sshPrefix(s string) string {
	if strings.TrimSpace(s) == "" {
		return "ssh …"
	}
	p, cut := cutEscaped(s, maxValue, screentext.Field)
	if cut {
		p += ellipsis
	}
	return p
}

// cmd is a command over SSH as a code span: the SSH prefix, then args
// (the server's words and values already escaped with screentext.Field).
func (c *comment) cmd(args ...string) string {
	return codeSpan(c.ssh + " " + strings.Join(args, " "))
}

// render lays the comment out within limit bytes.
func (c *comment) render(limit int) string {
	head := CommentMarker + "\n" + c.title()
	closing := "Approvals happen over SSH with the plan's digest (" +
		c.cmd("approve", "RUN", "--digest", "sha256:…") + "), never by a comment on the pull request.\n"
	if len(head)+len(closing) > limit {
		return wholeLines(head+closing, limit)
	}
	room := limit - len(head) - len(closing)
	note := c.note(room / 4)
	room -= len(note)
	superseded := c.superseded(room / 4)
	room -= len(superseded)
	merge := c.mergeHeading()
	if len(merge) > room {
		merge = ""
	}
	room -= len(merge)
	none := ""
	if len(c.r.Plans) == 0 && room >= len(noPlan) {
		none = noPlan
		room -= len(none)
	}
	plans, applies := c.sections(room, merge != "")
	plans = none + plans
	return head + plans + superseded + merge + applies + note + closing
}

// noPlan is what the comment says of a head no template planned (yet).
const noPlan = "No template has a plan of this head.\n\n"

// wholeLines is the lines of s, whole, that fit limit bytes.
func wholeLines(s string, limit int) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		if b.Len()+len(l) > limit {
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// title is the comment's heading: the head's short SHA and the pull
// request's number.
func (c *comment) title() string {
	return "## Switchtender: " + mdCode(shortSHA(c.r.HeadSHA)) + ", the head of pull request " + strconv.Itoa(c.r.Number) + "\n\n"
}

// note is r.Note as a paragraph of at most room bytes, or "".
func (c *comment) note(room int) string {
	if strings.TrimSpace(c.r.Note) == "" {
		return ""
	}
	s := "**Note:** " + textCut(c.r.Note, maxNote) + "\n\n"
	if len(s) > room {
		return ""
	}
	return s
}

// superseded lists the older heads, as many as fit room bytes, then how
// many more.
func (c *comment) superseded(room int) string {
	heads := c.r.Superseded
	if len(heads) == 0 {
		return ""
	}
	const lead, end = "Superseded heads, whose plans a newer head replaced: ", ".\n\n"
	item := func(i int) string {
		if i == 0 {
			return mdCode(shortSHA(heads[i]))
		}
		return ", " + mdCode(shortSHA(heads[i]))
	}
	kept, more := fitItems(len(heads), item, func(n int) string { return fmt.Sprintf(" and %d more", n) }, room-len(lead)-len(end))
	if len(kept) == 0 {
		return ""
	}
	return lead + strings.Join(kept, "") + more + end
}

// mergeHeading is the applies' heading once the pull request merged, "".
func (c *comment) mergeHeading() string {
	if c.r.MergeSHA == "" {
		return ""
	}
	s := "## Applies of the merge " + mdCode(shortSHA(c.r.MergeSHA)) + "\n\n"
	if len(c.r.Applies) == 0 {
		s += "The merge proposed no apply.\n\n"
	}
	return s
}

// sections renders the plans' and (when withApplies) the applies'
// sections within room bytes (see RenderComment), and the line saying how
// many were left out, after the applies.
func (c *comment) sections(room int, withApplies bool) (plans, applies string) {
	var secs []section
	for _, rr := range sortedRuns(c.r.Plans) {
		secs = append(secs, c.planSection(rr))
	}
	nPlans := len(secs)
	if withApplies {
		for _, rr := range sortedRuns(c.r.Applies) {
			secs = append(secs, c.applySection(rr))
		}
	}
	texts := layout(secs, room, len(c.leftOut(nPlans, len(secs)-nPlans)))
	plans = strings.Join(texts[:min(len(texts), nPlans)], "")
	applies = strings.Join(texts[min(len(texts), nPlans):], "")
	used := len(plans) + len(applies)
	if k := len(texts); k < len(secs) {
		if left := c.leftOut(max(0, nPlans-k), len(secs)-max(k, nPlans)); used+len(left) <= room {
			applies += left
		}
	}
	return plans, applies
}

// layout renders secs within room bytes, keeping reserve bytes free when
// it leaves any out. The first sections whose fixed blocks fit are kept
// (the rest are left out, from the end) and share the room as water fills
// vessels: a section that needs less than an even share takes only what
// it needs, the others are cut to the same size, and what a cut section
// leaves unused (it drops whole lines) passes on to the next. It returns
// the texts of the sections kept, in order.
func layout(secs []section, room, reserve int) []string {
	avail, k, mins := room, len(secs), 0
	for _, s := range secs {
		mins += s.min()
	}
	if mins > room { // some must be left out: keep room for the line that says so
		avail, k, mins = room-reserve, 0, 0
		for k < len(secs) && mins+secs[k].min() <= avail {
			mins += secs[k].min()
			k++
		}
	}
	full := make([]string, k) // each as it is with all the others at their least
	for i := range k {
		full[i] = secs[i].render(avail - mins + secs[i].min())
	}
	size := func(i, level int) int { return max(secs[i].min(), min(len(full[i]), level)) }
	lo, hi := 0, max(0, avail)
	for lo < hi { // the highest level at which the kept sections fit
		mid := lo + (hi-lo+1)/2
		t := 0
		for i := range k {
			t += size(i, mid)
		}
		if t <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out := make([]string, k)
	slack := 0
	for i := range k {
		budget := size(i, lo) + slack
		if out[i] = full[i]; len(full[i]) > budget {
			out[i] = secs[i].render(budget)
		}
		slack = budget - len(out[i])
	}
	return out
}

// leftOut is the paragraph saying how many plans and applies the comment
// leaves out, "" for none.
func (c *comment) leftOut(plans, applies int) string {
	var parts []string
	if plans > 0 {
		parts = append(parts, fmt.Sprintf("the plans of %d more %s", plans, plural(plans, "template", "templates")))
	}
	if applies > 0 {
		parts = append(parts, fmt.Sprintf("the applies of %d more %s", applies, plural(applies, "template", "templates")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Not shown here, to stay within the forge's limit: " + strings.Join(parts, " and ") + " (" + c.cmd("runs") + " lists them).\n\n"
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sortedRuns is runs sorted by template name (stable: runs of one
// template keep their order).
func sortedRuns(runs []RunReport) []RunReport {
	out := slices.Clone(runs)
	slices.SortStableFunc(out, func(a, b RunReport) int { return strings.Compare(a.Template, b.Template) })
	return out
}

// section is one template's part of the comment: a sequence of blocks,
// each either fixed (always shown whole) or cut to share what the fixed
// ones leave of the section's budget, in order (what one leaves unused
// passes to the next).
type section []block

// block is a fixed text, or (cut set) a part cut to a budget: cut returns
// at most budget bytes, "" when nothing fits.
type block struct {
	fixed string
	cut   func(budget int) string
}

// text adds a fixed block.
func (s *section) text(t string) { *s = append(*s, block{fixed: t}) }

// part adds a block cut to a budget.
func (s *section) part(cut func(int) string) { *s = append(*s, block{cut: cut}) }

// min is the fewest bytes the section takes: its fixed blocks.
func (s section) min() int {
	n := 0
	for _, b := range s {
		n += len(b.fixed)
	}
	return n
}

// render is the section within budget bytes (at least min()).
func (s section) render(budget int) string {
	var b strings.Builder
	room, cuts := budget-s.min(), 0
	for _, bl := range s {
		if bl.cut != nil {
			cuts++
		}
	}
	for _, bl := range s {
		if bl.cut == nil {
			b.WriteString(bl.fixed)
			continue
		}
		share := room / cuts
		cuts--
		if share <= 0 {
			continue
		}
		if t := bl.cut(share); len(t) <= share {
			b.WriteString(t)
			room -= len(t)
		}
	}
	return b.String()
}

// heading is a run's heading: its template, its status's words and the
// run.
func heading(rr RunReport, apply bool) string {
	word, ok := statusWord(rr, apply)
	if !ok {
		word = "status " + mdCode(word)
	}
	return "### " + mdCode(rr.Template) + ": " + word + ", run " + mdCode(rr.RunID) + "\n\n"
}

// planLine is a saved plan's counts and digest, "" before a plan was saved.
func planLine(rr RunReport) string {
	if rr.Digest == "" {
		return ""
	}
	return "**Plan:** " + screentext.PlanCounts(rr.Add, rr.Change, rr.Destroy, rr.Replace, rr.Forget) +
		". **Digest:** " + mdCode(rr.Digest) + "\n\n"
}

// supersededLine says which head replaced rr's, "" when none did.
func supersededLine(rr RunReport) string {
	if rr.SupersededBy == "" {
		return ""
	}
	return "Superseded by " + mdCode(shortSHA(rr.SupersededBy)) + ".\n\n"
}

// planSection is one plan of the head.
func (c *comment) planSection(rr RunReport) section {
	id := screentext.Field(rr.RunID)
	var s section
	s.text(heading(rr, false) + supersededLine(rr) + planLine(rr))
	if rr.Changes != nil {
		s.part(summaryPart(rr.Changes, c.ssh+" show "+id+" --changes"))
	}
	c.endBlocks(&s, rr)
	s.text("The whole run: " + c.cmd("show", id) + "\n\n")
	return s
}

// applySection is one apply the merge proposed.
func (c *comment) applySection(rr RunReport) section {
	id := screentext.Field(rr.RunID)
	var s section
	s.text(heading(rr, true) + supersededLine(rr) + planLine(rr) + c.approveLine(rr) + decisionLines(rr))
	c.endBlocks(&s, rr)
	switch {
	case len(rr.Differences) > 0:
		s.text(fmt.Sprintf("Its change set differs from the plan shown above (%d %s):\n\n",
			len(rr.Differences), plural(len(rr.Differences), "difference", "differences")))
		s.part(linesPart(rr.Differences, screentext.Sentence, func(n int) string {
			return fmt.Sprintf("… and %d more: %s show %s --changes", n, c.ssh, id)
		}))
	case rr.Compared:
		s.text("It makes the same changes as the plan shown above.\n\n")
	case rr.Digest != "":
		s.text("No plan was shown to compare with.\n\n")
	}
	s.text("The whole run: " + c.cmd("show", id) + "\n\n")
	return s
}

// approveLine is the command that approves an apply awaiting approval,
// "" for any other.
func (c *comment) approveLine(rr RunReport) string {
	if rr.Status != store.StatusAwaitingApproval || rr.Digest == "" {
		return ""
	}
	return "**Approve:** " + c.cmd("approve", screentext.Field(rr.RunID), "--digest", screentext.Field(rr.Digest)) + "\n\n"
}

// decisionLines say who approved or rejected rr and why it is stale.
func decisionLines(rr RunReport) string {
	var s string
	if rr.ApprovedBy != "" {
		s += "Approved by " + mdCode(rr.ApprovedBy) + ".\n\n"
	}
	if rr.RejectedBy != "" {
		s += "Rejected by " + mdCode(rr.RejectedBy) + ".\n\n"
	}
	if rr.Stale || rr.Status == store.StatusStale {
		why := "the state changed after the plan; nothing was applied"
		if strings.TrimSpace(rr.StaleReason) != "" {
			why = rr.StaleReason
		}
		s += "**Stale:** " + textCut(why, maxValue) + "\n\n"
	}
	return s
}

// endBlocks adds to s what says how rr ended other than as it should:
// the scan's findings of a refusal, else the message of a run that did
// not succeed.
func (c *comment) endBlocks(s *section, rr RunReport) {
	id := screentext.Field(rr.RunID)
	if len(rr.Findings) > 0 {
		s.text(fmt.Sprintf("The configuration scan found %d %s:\n\n", len(rr.Findings), plural(len(rr.Findings), "finding", "findings")))
		s.part(findingsPart(rr.Findings, func(n int) string {
			return fmt.Sprintf("- … and %d more: %s\n", n, c.cmd("show", id))
		}))
		return
	}
	switch rr.Status {
	case store.StatusSucceeded, store.StatusQueued, store.StatusRunning, store.StatusAwaitingApproval:
		return
	}
	if strings.TrimSpace(rr.Message) == "" {
		return
	}
	s.part(linesPart(strings.Split(strings.TrimRight(rr.Message, "\n"), "\n"), screentext.Text,
		func(n int) string { return fmt.Sprintf("… and %d more lines: %s show %s", n, c.ssh, id) }))
}

// textCut is s as mdText, cut first to room bytes of screentext.Sentence
// and then ended by "…".
func textCut(s string, room int) string {
	t, cut := cutEscaped(s, room, screentext.Sentence)
	if cut {
		return mdText(t) + ellipsis
	}
	return mdText(t)
}

// summaryPart is the change set's planview.Summary in a fenced block, cut
// by Summary itself to the budget the fence leaves; showCmd is already
// escaped.
func summaryPart(cs *planview.ChangeSet, showCmd string) func(int) string {
	return func(budget int) string {
		n := 3
		for {
			s := planview.Summary(cs, budget-fenceCost(n)-1, showCmd)
			if s == "" {
				return ""
			}
			s = screentext.Text(s) + "\n"
			if f := fenceFor(s); len(f) > n {
				n = len(f) // a backtick run in the summary: a longer fence, a smaller summary
				continue
			}
			return mdFence(s)
		}
	}
}

// linesPart is raw lines, each escaped with esc and cut to maxLine bytes,
// in one fenced block: the first lines that fit whole, then more(n) for
// the n left out (more's text is already escaped). Lines are escaped
// only as far as the budget reaches; the fence is measured on the raw
// lines, as no escaping adds a backtick.
func linesPart(lines []string, esc func(string) string, more func(n int) string) func(int) string {
	escaped := make([]string, len(lines)) // filled on demand, kept for the next budget
	item := func(i int) string {
		if escaped[i] == "" {
			t, cut := cutEscaped(lines[i], maxLine, esc)
			if cut {
				t += ellipsis
			}
			escaped[i] = t + "\n"
		}
		return escaped[i]
	}
	moreLine := func(n int) string { return screentext.Sentence(more(n)) + "\n" }
	run := longestRun(moreLine(len(lines)), '`')
	for _, l := range lines {
		run = max(run, longestRun(l, '`'))
	}
	fence := max(3, run+1)
	return func(budget int) string {
		kept, tail := fitItems(len(lines), item, moreLine, budget-fenceCost(fence))
		if len(kept) == 0 && tail == "" {
			return ""
		}
		return mdFence(strings.Join(kept, "") + tail)
	}
}

// findingsPart is the scan's findings as a list, one item each, "address
// (file:line): reason": the first that fit whole, then more(n) for the n
// left out.
func findingsPart(fs []store.Finding, more func(n int) string) func(int) string {
	item := func(i int) string { return "- " + findingItem(fs[i]) + "\n" }
	return func(budget int) string {
		kept, tail := fitItems(len(fs), item, more, budget-1)
		if len(kept) == 0 && tail == "" {
			return ""
		}
		return strings.Join(kept, "") + tail + "\n"
	}
}

// findingItem is one finding: its address, where it is and its reason.
func findingItem(f store.Finding) string {
	addr := "the root module"
	if f.Address != "" {
		addr = mdCode(f.Address)
	}
	where, cut := cutEscaped(f.File, maxValue, screentext.Field)
	if cut {
		where += ellipsis
	}
	if f.Line > 0 {
		where += ":" + strconv.Itoa(f.Line)
	}
	if where != "" {
		addr += " (" + codeSpan(where) + ")"
	}
	return addr + ": " + textCut(f.Reason, maxValue)
}

// fitItems is the first of n items (item(i) is the i-th) that fit room
// bytes whole, and when any is left out more(m) for the m left out,
// which fits too; no items and "" when not even more(n) fits. It asks
// for no item past the first that does not fit.
func fitItems(n int, item func(i int) string, more func(m int) string, room int) ([]string, string) {
	var kept []string
	used := 0
	for k := range n {
		it, tail := item(k), ""
		if k+1 < n {
			tail = more(n - k - 1)
		}
		if used+len(it)+len(tail) <= room {
			kept = append(kept, it)
			used += len(it)
			continue
		}
		if m := more(n - k); used+len(m) <= room {
			return kept, m
		}
		return kept, ""
	}
	return kept, ""
}
