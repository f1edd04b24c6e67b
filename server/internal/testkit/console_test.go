package testkit

import (
	"strings"
	"testing"
)

func TestScreenTextExpandsTheRenderersShorthand(t *testing.T) {
	raw := "\x1b[H\x1b[2J\x1b[1;31mDESTROYS 2\x1b[m\x1b[3;1Hdigest: sha256:ab\x1b[4b9\x1b[5;2Hx\x1b[3Xy\x1b]0;title\x07z"
	got := ScreenText(raw)
	for _, want := range []string{"DESTROYS 2", "digest: sha256:abbbbb9", "x   y", "z"} {
		if !strings.Contains(got, want) {
			t.Errorf("screenText = %q, lacks %q", got, want)
		}
	}
	if strings.Contains(got, "title") || strings.Contains(got, "\x1b") {
		t.Errorf("screenText kept control text: %q", got)
	}
}
