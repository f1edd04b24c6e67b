package planview

import (
	"slices"
	"testing"
)

// TestTheFilterShowsMatchingAddressesWithTheirSections checks that a
// filter keeps the counts, the changes whose address (old address, output
// name) holds it, ignoring case, and the headings of their sections only.
func TestTheFilterShowsMatchingAddressesWithTheirSections(t *testing.T) {
	v := NewView(everySection(t))
	shown := func(q string) []string {
		var out []string
		for _, i := range v.Filter(q) {
			out = append(out, v.Lines(i, false)[min(1, len(v.Lines(i, false))-1)].Text)
		}
		return out
	}
	if got := shown("AWS_VPC"); !slices.Equal(got, []string{
		"Leaves state, not destroyed: 2 (1 forgotten, 1 forgotten then created)",
		"Moved (1): old address → new", "moved aws_vpc.main → module.net.aws_vpc.main"}) {
		t.Fatalf("filter aws_vpc shows %q", got)
	}
	if got := shown("endpoint"); len(got) != 3 || got[1] != "Outputs (1)" {
		t.Fatalf("filter endpoint shows %q", got)
	}
	if got := v.Matches(v.Filter("nothing matches this")); got != 0 {
		t.Fatalf("a filter that matches nothing shows %d changes", got)
	}
	if got, all := v.Matches(v.Filter("  ")), v.Matches(v.Filter("")); got != all || all != 8 {
		t.Fatalf("a blank filter shows %d of %d changes, want all 8", got, all)
	}
}
