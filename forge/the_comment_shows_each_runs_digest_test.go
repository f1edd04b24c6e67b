package forge

import (
	"strings"
	"testing"
)

// sectionOf is the lines of the comment's section of template under the
// part that starts with the heading prefix part ("## Switchtender" for
// the plans, "## Applies" for the applies).
func sectionOf(t *testing.T, lines []mdLine, part, template string) []mdLine {
	t.Helper()
	in, start := false, -1
	for i, l := range lines {
		switch {
		case l.kind == "heading" && start >= 0:
			return lines[start:i]
		case l.kind == "heading" && strings.HasPrefix(l.shown, "## "):
			in = strings.HasPrefix(l.shown, part)
		case in && l.kind == "heading" && len(l.spans) > 0 && l.spans[0] == template:
			start = i
		}
	}
	if start < 0 {
		t.Fatalf("no section of %s under %q", template, part)
	}
	end := len(lines)
	for i := start; i < len(lines); i++ {
		if strings.HasPrefix(lines[i].shown, "Superseded heads") || strings.HasPrefix(lines[i].shown, "**Note:**") {
			end = i
			break
		}
	}
	return lines[start:end]
}

// spanAfter is the code span that follows the active text label on a
// line of lines, "" when none does.
func spanAfter(lines []mdLine, label string) string {
	for _, l := range lines {
		if i := strings.Index(l.shown, label); i >= 0 && l.kind == "text" {
			rest := l.shown[i+len(label):]
			for _, s := range l.spans {
				if strings.HasPrefix(rest, s) {
					return s
				}
			}
		}
	}
	return ""
}

// TestTheCommentShowsEachRunsDigest checks that every saved plan's
// section shows exactly the RunReport's digest, in full, in its own code
// span, and that the apply awaiting approval shows the approve command
// with that digest and its run.
func TestTheCommentShowsEachRunsDigest(t *testing.T) {
	r := typicalReport(t)
	lines, err := readMarkdown(RenderComment(r, CommentLimit))
	if err != nil {
		t.Fatal(err)
	}
	for part, runs := range map[string][]RunReport{"## Switchtender": r.Plans, "## Applies": r.Applies} {
		for _, rr := range runs {
			sec := sectionOf(t, lines, part, rr.Template)
			if got := spanAfter(sec, "Digest:** "); got != rr.Digest {
				t.Errorf("%s %s: the digest shown is %q, want %q", part, rr.Template, got, rr.Digest)
			}
		}
	}
	sec := sectionOf(t, lines, "## Applies", "network")
	want := r.SSH + " approve 21 --digest " + digestB
	if got := spanAfter(sec, "Approve:** "); got != want {
		t.Errorf("the approve command is %q, want %q", got, want)
	}
	for _, tmpl := range []string{"cache", "dns"} {
		if got := spanAfter(sectionOf(t, lines, "## Applies", tmpl), "Approve:** "); got != "" {
			t.Errorf("the apply of %s, which awaits no approval, shows the approve command %q", tmpl, got)
		}
	}
}
