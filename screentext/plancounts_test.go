package screentext

import "testing"

// The counts sentence is tofu's: a replacement counts in add and destroy,
// and replacements and forgets follow in parentheses only when there are any.
func TestPlanCountsSaysWhatAPlanDoesInTofusWords(t *testing.T) {
	for _, c := range []struct {
		add, change, destroy, replace, forget int
		want                                  string
	}{
		{0, 0, 0, 0, 0, "0 to add, 0 to change, 0 to destroy"},
		{2, 1, 0, 0, 0, "2 to add, 1 to change, 0 to destroy"},
		{1, 0, 2, 1, 0, "2 to add, 0 to change, 2 to destroy (1 replaced)"},
		{0, 0, 0, 0, 3, "0 to add, 0 to change, 0 to destroy (3 to forget)"},
		{1, 2, 3, 1, 1, "2 to add, 2 to change, 3 to destroy (1 replaced, 1 to forget)"},
		{3, 0, 1, 0, 0, "3 to add, 0 to change, 1 to destroy"}, // add+replace already summed
	} {
		if got := PlanCounts(c.add, c.change, c.destroy, c.replace, c.forget); got != c.want {
			t.Errorf("PlanCounts(%d, %d, %d, %d, %d) = %q, want %q", c.add, c.change, c.destroy, c.replace, c.forget, got, c.want)
		}
	}
}
