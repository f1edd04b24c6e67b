package planview

import (
	"fmt"
	"strings"

	"github.com/switchtender/switchtender/screentext"
)

// Text is the whole view as plain text lines no wider than width (0: no
// limit), every value escaped: what `show RUN --changes` prints.
// (Interim: addresses by section.)
func Text(cs *ChangeSet, width int) string {
	var b strings.Builder
	for _, r := range cs.Resources {
		fmt.Fprintf(&b, "%s %s\n", r.Section, screentext.Field(r.Address))
	}
	return b.String()
}

// Summary is the short form for a notification: the risk sections' first
// lines and counts, at most maxBytes bytes, ending with showCmd (the `show`
// command for the rest). (Interim.)
func Summary(cs *ChangeSet, maxBytes int, showCmd string) string {
	s := Text(cs, 0)
	if len(s) > maxBytes-len(showCmd)-1 {
		s = s[:max(0, maxBytes-len(showCmd)-1)]
	}
	return s + showCmd
}
