package forge

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// TestARefusalShowsEachFindingWhereItIs checks that a refused plan lists
// every finding as one item: its address and its file:line, each in a
// code span, then its reason; a finding of no address names the root
// module, one of no file shows no place, one of no line its file alone.
func TestARefusalShowsEachFindingWhereItIs(t *testing.T) {
	r := Report{Number: 3, HeadSHA: strings.Repeat("c", 40), SSH: "ssh switchtender", Plans: []RunReport{{
		Template: "dns", RunID: "9", Status: store.StatusRefused, Findings: []store.Finding{
			{Address: "data.external.lookup", File: "dns/main.tf", Line: 12, Reason: "an external data source runs a program"},
			{Address: "module.records", Reason: "a module source outside the repository"},
			{File: "versions.tf", Reason: "an encryption block reads a file"},
		}}}}
	out := RenderComment(r, CommentLimit)
	lines, err := readMarkdown(out)
	if err != nil {
		t.Fatal(err)
	}
	var items []mdLine
	for _, l := range lines {
		if l.kind == "item" {
			items = append(items, l)
		}
	}
	want := []struct {
		spans []string
		shown string
	}{
		{[]string{"data.external.lookup", "dns/main.tf:12"}, "- data.external.lookup (dns/main.tf:12): an external data source runs a program"},
		{[]string{"module.records"}, "- module.records: a module source outside the repository"},
		{[]string{"versions.tf"}, "- the root module (versions.tf): an encryption block reads a file"},
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d:\n%s", len(items), len(want), out)
	}
	for i, w := range want {
		if !slices.Equal(items[i].spans, w.spans) || items[i].shown != w.shown {
			t.Errorf("item %d reads %q with spans %q, want %q with %q", i, items[i].shown, items[i].spans, w.shown, w.spans)
		}
	}
	if !strings.Contains(out, "The configuration scan found 3 findings:") || !strings.Contains(out, "`ssh switchtender show 9`") {
		t.Errorf("the refusal does not say how many findings or where the rest is:\n%s", out)
	}
}
