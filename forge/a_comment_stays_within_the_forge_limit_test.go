package forge

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// tenThousandChanges is the change set of the gate's committed plan: a
// real OpenTofu v1.12.6 plan over 10,000 terraform_data resources (8,000
// replaces, 2,000 deletes), as planview/bench_test.go reads it.
var tenThousandChanges = sync.OnceValues(func() (*planview.ChangeSet, error) {
	f, err := os.Open(filepath.Join("..", "gate", "testdata", "plan-10k-changes.json.gz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	plan, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return planview.Build(plan, planview.NewFingerprinter([]byte("test key")))
})

// hugeReport is a report of n templates, each planned with the
// 10,000-change set and refused with 1,000 findings alike, and once merged
// each template's apply differing from its plan on every one of its
// 10,000 resources, with a message of 5,000 lines.
func hugeReport(t *testing.T, n int) Report {
	cs, err := tenThousandChanges()
	if err != nil {
		t.Fatal(err)
	}
	return manyTemplates(cs, n)
}

// manyTemplates is hugeReport's report over change set cs.
func manyTemplates(cs *planview.ChangeSet, n int) Report {
	diffs := make([]string, len(cs.Resources))
	for i, r := range cs.Resources {
		diffs[i] = r.Address + ": replaced, and the plan shown deleted it"
	}
	var findings []store.Finding
	for i := range 1000 {
		findings = append(findings, store.Finding{Address: fmt.Sprintf("data.external.x%d", i), File: "main.tf", Line: i + 1,
			Reason: "an external data source runs a program"})
	}
	msg := strings.Repeat("Error: a line of a long log, naïve 字\n", 5000)
	r := Report{Number: 1, HeadSHA: strings.Repeat("a", 40), SSH: "ssh -p 2222 switchtender.example.com", MergeSHA: strings.Repeat("b", 40)}
	for i := range n {
		name := fmt.Sprintf("template-%04d", i)
		r.Plans = append(r.Plans, RunReport{Template: name, RunID: fmt.Sprint(i + 1), Status: store.StatusSucceeded, Digest: digestA,
			Changes: cs, Replace: 8000, Destroy: 10000},
			RunReport{Template: name + "-scan", RunID: fmt.Sprint(n + i + 1), Status: store.StatusRefused, Findings: findings})
		r.Applies = append(r.Applies, RunReport{Template: name, RunID: fmt.Sprint(2*n + i + 1), Status: store.StatusFailed,
			Digest: digestB, Changes: cs, Compared: true, Differences: diffs, Message: msg})
	}
	for i := range 500 {
		r.Superseded = append(r.Superseded, fmt.Sprintf("%040x", i))
	}
	r.Note = strings.Repeat("a note that goes on ", 1000)
	return r
}

// checkComment fails t when s exceeds limit bytes, is not valid UTF-8,
// leaves a fence or a code span open, or does not start with the marker.
func checkComment(t *testing.T, s string, limit int) []mdLine {
	t.Helper()
	if len(s) > limit {
		t.Fatalf("limit %d: the comment is %d bytes", limit, len(s))
	}
	if !utf8.ValidString(s) {
		t.Fatalf("limit %d: the comment is not valid UTF-8", limit)
	}
	lines, err := readMarkdown(s)
	if err != nil {
		t.Fatalf("limit %d: %v\n%s", limit, err, s)
	}
	if s != "" && !strings.HasPrefix(s, CommentMarker+"\n") {
		t.Fatalf("limit %d: the comment does not start with the marker: %q", limit, s[:min(len(s), 40)])
	}
	return lines
}

// headings counts the template headings ("### ") of lines.
func headings(lines []mdLine) int {
	n := 0
	for _, l := range lines {
		if l.kind == "heading" && strings.HasPrefix(l.shown, "### ") {
			n++
		}
	}
	return n
}

// TestACommentStaysWithinTheForgeLimit renders 5 and 50 templates, each
// with the 10,000-change plan, 1,000 findings and a failed apply
// differing on 10,000 resources, with a 5,000-line message, within
// CommentLimit: every template keeps its section and the comment fills
// most of the limit; with 5, each summary is cut by Summary itself (it
// names how many changes it leaves out and the command for the rest) and
// each list and block says how many it leaves out.
func TestACommentStaysWithinTheForgeLimit(t *testing.T) {
	for _, n := range []int{5, 50} {
		s := RenderComment(hugeReport(t, n), CommentLimit)
		lines := checkComment(t, s, CommentLimit)
		if got := headings(lines); got != 3*n {
			t.Fatalf("%d templates: %d sections of %d are shown", n, got, 3*n)
		}
		if strings.Contains(s, "Not shown here") {
			t.Errorf("%d templates: a section is left out though every one fits", n)
		}
		if len(s) < CommentLimit*9/10 {
			t.Errorf("%d templates: the comment uses %d bytes of %d: the sections leave their share unused", n, len(s), CommentLimit)
		}
		if !strings.Contains(s, "more changes: ssh -p 2222 switchtender.example.com show 1 --changes") {
			t.Errorf("%d templates: the first plan's summary does not say how many changes it leaves out", n)
		}
		if n > 5 {
			continue
		}
		for _, want := range []string{"- … and 9", "more: `ssh -p 2222 switchtender.example.com show 6`",
			"more: ssh -p 2222 switchtender.example.com show 11 --changes",
			"more lines: ssh -p 2222 switchtender.example.com show 11", "**Digest:** `" + digestA + "`"} {
			if !strings.Contains(s, want) {
				t.Errorf("%d templates: the comment lacks %q", n, want)
			}
		}
	}
}

// TestTooManyTemplatesAreCountedNotCut renders 1,000 templates' plans and
// applies (300 deletes each, so as to be quick): the sections that do not fit are left out whole, from the end,
// and one line says how many and where to see them.
func TestTooManyTemplatesAreCountedNotCut(t *testing.T) {
	cs := &planview.ChangeSet{Counts: planview.Counts{Delete: 300, Destroy: 300}}
	for i := range 300 {
		cs.Resources = append(cs.Resources, planview.Resource{Section: planview.SectionDelete, Address: fmt.Sprintf("terraform_data.r[%d]", i), Actions: []string{"delete"}})
	}
	s := RenderComment(manyTemplates(cs, 1000), CommentLimit)
	lines := checkComment(t, s, CommentLimit)
	shown := headings(lines)
	if shown == 0 || shown >= 3000 {
		t.Fatalf("%d sections shown of 3000", shown)
	}
	plans := min(shown, 2000)
	var want string
	if shown < 2000 {
		want = fmt.Sprintf("the plans of %d more templates and the applies of 1000 more templates (`ssh -p 2222 switchtender.example.com runs` lists them).", 2000-plans)
	} else {
		want = fmt.Sprintf("the applies of %d more templates (`ssh -p 2222 switchtender.example.com runs` lists them).", 3000-shown)
	}
	if !strings.Contains(s, "Not shown here, to stay within the forge's limit: "+want) {
		t.Fatalf("%d sections shown; the comment does not say %q:\n%s", shown, want, s[len(s)-600:])
	}
	if !strings.HasSuffix(s, "never by a comment on the pull request.\n") {
		t.Errorf("the closing line is missing")
	}
}

// TestEveryLimitIsKept renders the huge report and the typical one at
// limits from nothing to past the whole comment: never more bytes than
// the limit, valid UTF-8, every fence and code span closed.
func TestEveryLimitIsKept(t *testing.T) {
	huge := hugeReport(t, 3)
	typical := typicalReport(t)
	full := len(RenderComment(typical, 1<<30))
	for limit := 0; limit <= full+64; limit++ {
		checkComment(t, RenderComment(typical, limit), limit)
	}
	for limit := 0; limit <= CommentLimit; limit += 1 + limit/8 {
		checkComment(t, RenderComment(huge, limit), limit)
	}
	if s := RenderComment(typical, full); len(s) != full {
		t.Errorf("at its own length the typical comment is %d bytes, not %d", len(s), full)
	}
}
