package planview

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

const showCmd = "ssh switchtender show r-7 --changes"

// TestTheSummaryNamesTheRiskSectionsAndTheShowCommand checks a summary
// with room for everything: the counts, each risk section's heading and
// first changes, and the command for the whole view, last.
func TestTheSummaryNamesTheRiskSectionsAndTheShowCommand(t *testing.T) {
	s := Summary(everySection(t), 2000, showCmd)
	lines := strings.Split(s, "\n")
	last := -1
	for _, want := range []string{"Destroys 2 (1 replaced, 1 deleted)", "Leaves state, not destroyed: 2", "Also: 1 updated",
		"Replaced (1)", "-/+ aws_instance.web", "why: a change that cannot be made in place", "forced by: ami",
		"Deleted (1)", `- aws_s3_bucket.logs["eu-west-1"]`, "Forgotten (1): leaves state, not destroyed", "forget aws_iam_role.legacy",
		"Forgotten, then created (1)", "forget/+ aws_db_instance.main", "… and 4 more changes: " + showCmd} {
		i := lineIndex(lines, want)
		if i <= last {
			t.Fatalf("%q is missing or out of order:\n%s", want, s)
		}
		last = i
	}
	if last != len(lines)-1 || strings.HasSuffix(s, "\n") {
		t.Fatalf("the show command is not the last line:\n%q", s)
	}
	for _, absent := range []string{"aws_iam_policy.deploy", "password", "ami-0a1b2c3d"} {
		if strings.Contains(s, absent) {
			t.Errorf("the summary holds %q, which is no risk section's head:\n%s", absent, s)
		}
	}
}

// TestTheSummaryNeverExceedsItsLimit checks every limit from 0 to past
// the whole summary, on a plan of many replacements with non-ASCII
// addresses: never more bytes than the limit, valid UTF-8, whole lines of
// the full summary only, and the last line saying how many changes are
// left unnamed and where the rest is, whenever it fits.
func TestTheSummaryNeverExceedsItsLimit(t *testing.T) {
	cs := &ChangeSet{Counts: Counts{Replace: 40, Destroy: 40}}
	for i := range 40 {
		cs.Resources = append(cs.Resources, Resource{Section: SectionReplace, Address: fmt.Sprintf(`aws_x.y["naïve-字-%d"]`, i),
			Actions: []string{"delete", "create"}, Reason: "replace_because_tainted"})
	}
	full := Summary(cs, 1<<20, showCmd)
	fullLines := strings.Split(full, "\n")
	for limit := 0; limit <= len(full)+8; limit++ {
		s := Summary(cs, limit, showCmd)
		if len(s) > limit || !utf8.ValidString(s) {
			t.Fatalf("limit %d: %d bytes, valid UTF-8 %v:\n%q", limit, len(s), utf8.ValidString(s), s)
		}
		lines := strings.Split(s, "\n")
		trailer := lines[len(lines)-1]
		for k, l := range lines[:len(lines)-1] {
			if l != fullLines[k] {
				t.Fatalf("limit %d: line %d %q is not the full summary's %q", limit, k, l, fullLines[k])
			}
		}
		named := strings.Count(s, "-/+ ")
		if strings.HasPrefix(trailer, "…") && trailer != fmt.Sprintf("… and %d more changes: %s", 40-named, showCmd) {
			t.Fatalf("limit %d: names %d changes and ends %q", limit, named, trailer)
		}
		if limit >= 200 && !strings.HasSuffix(s, showCmd) {
			t.Fatalf("limit %d: the show command is missing:\n%s", limit, s)
		}
	}
	if !strings.HasSuffix(full, fmt.Sprintf("… and %d more changes: %s", 40-summaryPerSection, showCmd)) {
		t.Fatalf("the whole summary names more than the first changes of a section:\n%s", full)
	}
}

// TestASummaryThatNamesEveryChangePointsAtTheWholeView checks the last
// line when nothing is left unnamed, and without a show command.
func TestASummaryThatNamesEveryChangePointsAtTheWholeView(t *testing.T) {
	cs := &ChangeSet{Counts: Counts{Delete: 1, Destroy: 1}, Resources: []Resource{{Section: SectionDelete, Address: "a.b", Actions: []string{"delete"}}}}
	if s := Summary(cs, 500, showCmd); !strings.HasSuffix(s, "\nthe whole view: "+showCmd) {
		t.Fatalf("summary:\n%s", s)
	}
	if s := Summary(cs, 500, ""); !strings.HasSuffix(s, "- a.b") {
		t.Fatalf("summary without a command:\n%q", s)
	}
}
