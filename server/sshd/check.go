package sshd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// writeCheck writes what a drift check found: when it ran, the drift per
// address and attribute, the changes the configuration would make, the
// counts and the digest of the kept plan, and its masked plan text when
// the view has it.
func writeCheck(w io.Writer, v api.RunView) {
	c := v.Check
	fmt.Fprintf(w, "drift check at %s\n", c.CheckedAt.Format(time.RFC3339))
	if !c.Drifted {
		fmt.Fprintln(w, "  no drift: the state matches the configuration")
		return
	}
	writeDiffs(w, "changed outside OpenTofu", c.Drift)
	writeDiffs(w, "the configuration would", c.Changes)
	if p := c.Plan; p != nil {
		fmt.Fprintf(w, "  digest   %s\n", p.Digest)
		fmt.Fprintf(w, "  DESTROYS %d (every delete, replacements included)\n", p.Destroy)
		fmt.Fprintf(w, "  plan:    %s\n", api.PlanCounts(p))
		writeChangesHint(w, v)
		for _, l := range api.Lookalikes(p.Addresses) {
			fmt.Fprintf(w, "  LOOKALIKE %s %s\n", screentext.Field(l.Address), l)
		}
		for _, h := range p.Holds {
			fmt.Fprintf(w, "  a reconcile would be held by rule %s too: %s\n", screentext.Field(h.Rule), screentext.Sentence(h.Reason))
		}
		if p.PlanText != "" {
			fmt.Fprintf(w, "plan (masked):\n%s", p.PlanText)
		}
	}
}

// writeDiffs writes resource diffs under a heading, attributes by name.
func writeDiffs(w io.Writer, heading string, ds []store.ResourceDiff) {
	if len(ds) == 0 {
		fmt.Fprintf(w, "  %s: nothing\n", heading)
		return
	}
	fmt.Fprintf(w, "  %s:\n", heading)
	for _, d := range ds {
		attrs := ""
		if len(d.Attributes) > 0 {
			shown := make([]string, len(d.Attributes))
			for i, a := range d.Attributes {
				shown[i] = screentext.Field(a)
			}
			attrs = " (" + strings.Join(shown, ", ") + ")"
		}
		fmt.Fprintf(w, "    %s %s%s\n", d.Action, screentext.Field(d.Address), attrs)
	}
}
