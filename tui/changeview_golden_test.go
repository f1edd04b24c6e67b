package tui

import (
	"testing"
)

// TestGoldenChangeView keeps the console's change view of everySection
// at 80x24 as it opens (every change folded to its head, the cursor on the
// first) and at 200x60 (every resource unfolded), with colour and with
// NO_COLOR. The goldens keep the
// styles (testdata/changes_*.golden hold the escape sequences); without
// them the two read the same words, and NO_COLOR has no colour at all.
func TestGoldenChangeView(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"changes_80x24", 80, 24, nil},
		{"changes_200x60", 200, 60, []string{"e"}},
	} {
		var views [2]string
		for k, noColor := range []bool{false, true} {
			f := newFake()
			withChanges(f, everySection(t))
			d := newDriver(t, f, Options{Width: c.w, Height: c.h, NoColor: noColor})
			d.openRun("r-7")
			d.waitText("Destroys 2")
			d.press(c.keys...)
			views[k] = d.m.View().Content
			name := c.name
			if noColor {
				name += "_nocolor"
			}
			golden(t, name, views[k])
		}
		if stripANSI(views[0]) != stripANSI(views[1]) {
			t.Errorf("%s: the words differ with and without colour:\n%s\n--- NO_COLOR\n%s", c.name, stripANSI(views[0]), stripANSI(views[1]))
		}
		if loc := colourSGR.FindStringIndex(views[1]); loc != nil {
			t.Errorf("%s: NO_COLOR has a colour sequence %q", c.name, views[1][loc[0]:loc[1]])
		}
		if !colourSGR.MatchString(views[0]) {
			t.Errorf("%s: the colour view has no colour", c.name)
		}
	}
}
