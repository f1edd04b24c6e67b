package forge

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// shapedReport is a report with every value the forge, the configuration
// or a plan gives set to v (a message to msg), in every kind of run.
func shapedReport(v, msg string) Report {
	cs := &planview.ChangeSet{Counts: planview.Counts{Delete: 1, Destroy: 1, Replace: 1},
		Resources: []planview.Resource{
			{Section: planview.SectionReplace, Address: v, Actions: []string{"delete", "create"}, Reason: v, ReplacePaths: []string{v}},
			{Section: planview.SectionDelete, Address: "x." + v, Actions: []string{"delete"}},
		}}
	findings := []store.Finding{{Address: v, File: v, Line: 3, Reason: v}, {Address: v, Reason: v}}
	return Report{
		Repository: v, Number: 7, HeadSHA: v, SSH: "ssh " + v,
		Plans: []RunReport{
			{Template: v, RunID: v, Status: store.StatusSucceeded, Digest: v, Changes: cs, Add: 1},
			{Template: v + "b", RunID: v, Status: store.StatusRefused, Findings: findings, Message: msg},
			{Template: v + "c", RunID: v, Status: store.StatusFailed, Message: msg},
			{Template: v + "d", RunID: v, Status: store.Status(v), Message: msg},
			{Template: v + "e", RunID: v, Status: store.StatusSucceeded, SupersededBy: v},
		},
		Superseded: []string{v, v},
		MergeSHA:   v,
		Applies: []RunReport{
			{Template: v, RunID: v, Status: store.StatusAwaitingApproval, Digest: v, Changes: cs, Differences: []string{v, v}, Compared: true},
			{Template: v + "b", RunID: v, Status: store.StatusRejected, Digest: v, RejectedBy: v, Message: msg},
			{Template: v + "c", RunID: v, Status: store.StatusStale, Digest: v, ApprovedBy: v, Stale: true, StaleReason: v},
		},
		Note: v,
	}
}

// TestACommentShowsNoHiddenCharacter checks that no control, bidi or
// invisible character of any value reaches the comment raw: every rune
// but the newline is one screentext lets through, and each hostile
// character shows as its escape.
func TestACommentShowsNoHiddenCharacter(t *testing.T) {
	out := RenderComment(shapedReport(hostile, hostile), CommentLimit)
	if !utf8.ValidString(out) {
		t.Fatal("the comment is not valid UTF-8")
	}
	for i, r := range out {
		if r != '\n' && screentext.Hidden(r) {
			t.Fatalf("byte %d: the hidden character %U reaches the comment raw:\n%s", i, r, out)
		}
	}
	for _, esc := range []string{`\x1b[2J`, `\u{202e}`, `\u{200b}`, `\x00`, `\u{2028}`, `\r`} {
		if !strings.Contains(out, esc) {
			t.Errorf("the escape %s is missing: a hidden character was dropped, not shown", esc)
		}
	}
}

// TestAValueCannotChangeTheCommentsMarkdown renders one report with every
// value hostile and once with every value plain: the two comments have
// the same structure line for line (headings, items, paragraphs, fences),
// every fence and code span closes, the text a forge interprets holds
// nothing a value could have opened (HTML, a link, an image, a mention, a
// reference, an emoji, an autolink, emphasis, a table cell), and the
// hostile template name reads back whole from its code span.
func TestAValueCannotChangeTheCommentsMarkdown(t *testing.T) {
	plain, err := readMarkdown(RenderComment(shapedReport("plain", "plain"), CommentLimit))
	if err != nil {
		t.Fatal(err)
	}
	out := RenderComment(shapedReport(hostile, hostile), CommentLimit)
	lines, err := readMarkdown(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, want := skeleton(lines), skeleton(plain); got != want {
		t.Fatalf("hostile values change the structure:\n got %s\nwant %s\n%s", got, want, out)
	}
	active := activeText(lines)
	for _, ours := range []string{"**Plan:**", "**Digest:**", "**Approve:**", "**Stale:**", "**Note:**", "### ", "## "} {
		active = strings.ReplaceAll(active, ours, "")
	}
	if i := strings.IndexAny(active, "<>[]@!|&_*~$%#\\"); i >= 0 {
		t.Fatalf("%q is active markdown in the comment's text:\n%s", active[i], active)
	}
	for _, bad := range []string{"<img", "](", "@everyone", "www.", "http:", "://"} {
		if strings.Contains(active, bad) {
			t.Errorf("%q is active in the comment's text", bad)
		}
	}
	for i := range len(active) - 1 {
		if active[i] == ':' && active[i+1] != ' ' && active[i+1] != '\n' {
			t.Fatalf("an active colon starts something a forge reads (a scheme, an emoji): %q", active[max(0, i-20):min(len(active), i+20)])
		}
	}
	if !hasSpan(lines, screentext.Field(hostile)) {
		t.Errorf("no code span reads back as the template name escaped: %q\n%s", screentext.Field(hostile), out)
	}
}

// hasSpan reports whether a code span of lines holds exactly want.
func hasSpan(lines []mdLine, want string) bool {
	for _, l := range lines {
		for _, s := range l.spans {
			if s == want {
				return true
			}
		}
	}
	return false
}
