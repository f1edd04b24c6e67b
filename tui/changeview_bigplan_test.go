package tui

import "testing"

// TestABigPlanOpensOnItsHeadsAlone opens the view of 10,000 changes and
// checks the work it did: each item's folded head made once, and the
// unfolded lines of only the items drawn (to know whether to mark them
// ▸), on opening and after scrolling a few pages, so neither costs the
// changes' attributes.
func TestABigPlanOpensOnItsHeadsAlone(t *testing.T) {
	f := newFake()
	withChanges(f, richChangeSet(10000))
	m := consoleOn(f, "r-7", 80, 24)
	_ = m.View()
	cp := m.detail.changes
	asked := func() (heads, bodies int) {
		for i := range cp.lines {
			if cp.lines[i] != nil {
				heads++
			}
			if cp.expandable[i] != 0 {
				bodies++
			}
		}
		return heads, bodies
	}
	if heads, bodies := asked(); heads != len(cp.items) || bodies > cp.height {
		t.Fatalf("opening made %d heads of %d items and asked %d items for their attributes (%d rows on screen)",
			heads, len(cp.items), bodies, cp.height)
	}
	for range 10 {
		pressAndDraw(m, "pgdown")
	}
	if _, bodies := asked(); bodies > 11*cp.height {
		t.Fatalf("10 pages asked %d items for their attributes", bodies)
	}
	if cp.top == 0 {
		t.Fatal("pgdown did not scroll")
	}
}
