package tui

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/planview"
)

// heldMessage is the message the server gives a held apply: longer than
// a row of 80 cells, the digest's command at its end.
const heldMessage = "Held for approval: plan destroys 1 resource; max_destroy is 0 (terraform_data.a) (rule no-destroys). " +
	"An approver releases exactly this plan with: approve r-7 --digest sha256:" +
	"72f3ea8dcca1c386734790a5dfe76616db398ad97ffec1121726a9ffe8d4486e"

// replaceForgetUpdate is a held apply that replaces one resource (forced
// by triggers_replace), forgets another and updates a third.
func replaceForgetUpdate() *planview.ChangeSet {
	return &planview.ChangeSet{
		Counts: planview.Counts{Destroy: 1, Replace: 1, Forget: 1, Update: 1},
		Resources: []planview.Resource{
			{Section: planview.SectionReplace, Address: "terraform_data.a", Actions: []string{"delete", "create"},
				Reason: "replace_because_cannot_update", ReplacePaths: []string{"triggers_replace"},
				Attributes: []planview.Attribute{{Path: "triggers_replace[0]", Before: `"1"`, After: `"2"`, ForcesReplacement: true}}, Unchanged: 3},
			{Section: planview.SectionForget, Address: "terraform_data.b", Actions: []string{"forget"},
				Reason: "forgot_because_lifecycle_destroy_in_config", Unchanged: 4},
			{Section: planview.SectionUpdate, Address: "terraform_data.c", Actions: []string{"update"},
				Attributes: []planview.Attribute{{Path: "input", Before: `"c-1"`, After: `"c-2"`}}, Unchanged: 3},
		},
	}
}

// heldReplaceAndForget is the fake's r-7 holding replaceForgetUpdate with
// heldMessage, asked for by a person (requested says no more than the
// status line's requester).
func heldReplaceAndForget() *fakeBackend {
	f := newFake()
	withChanges(f, replaceForgetUpdate())
	f.editRun("r-7", func(r *RunDetail) {
		r.Message, r.Requester, r.Agent = heldMessage, "carol", false
		p := r.Proposal
		p.Requested = "carol (person)"
		p.Add, p.Change, p.Destroy, p.Replace, p.Forget = 0, 1, 1, 1, 1
		p.Holds = []Hold{{Rule: "no-destroys", Reason: "the plan destroys 1, max_destroy is 0", Approvers: []string{"bob"}}}
	})
	return f
}

// TestAHeldReplaceAndForgetFitTheFirstScreenAt80x24 opens the held apply
// at 80x24: the first screen carries the header an approver needs (the
// DESTROYS box, who holds it, the digest) and, below it, every risk head:
// the counts, the replace with why and what forces it, the forget under a
// heading saying it leaves state, with the cursor on the replace.
func TestAHeldReplaceAndForgetFitTheFirstScreenAt80x24(t *testing.T) {
	f := heldReplaceAndForget()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 1")
	screen := d.view()
	at := 0
	for _, want := range []string{
		"DESTROYS 1", "held by: no-destroys → bob", "digest: " + f.details["r-7"].Proposal.Digest, "[Proposal]",
		"Destroys 1 (1 replaced, 0 deleted)", "Leaves state, not destroyed: 1 (1 forgotten, 0 forgotten then created)", "Also: 1 updated",
		"Replaced (1): destroyed, then created again", "> ▸ -/+ terraform_data.a", "why: a change that cannot be made in place",
		"forced by: triggers_replace", "Forgotten (1): leaves state, not destroyed", "▸ forget terraform_data.b",
	} {
		i := strings.Index(screen[at:], want)
		if i < 0 {
			t.Fatalf("the first screen lacks %q after what comes before it:\n%s", want, screen)
		}
		at += i + len(want)
	}
}

// TestAShortScreenGivesTheMessageOneRowCutAtAWord checks the header of a
// screen under roomyRows high: the run's message takes one row, cut at a
// word with a pointer to m, and "requested:" is left out when it says no
// more than the status line's requester. On a roomy screen the message
// and the requested line are whole.
func TestAShortScreenGivesTheMessageOneRowCutAtAWord(t *testing.T) {
	d := newDriver(t, heldReplaceAndForget(), Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 1")
	var msg []string
	for _, l := range strings.Split(d.view(), "\n") {
		if strings.HasPrefix(l, "message: ") || strings.HasPrefix(l, "(terraform_data.a)") || strings.Contains(l, "--digest") {
			msg = append(msg, l)
		}
	}
	const more = "… (m: whole)"
	if len(msg) != 1 || !strings.HasSuffix(msg[0], more) || len([]rune(msg[0])) > 80 {
		t.Fatalf("the message does not take one row ending with %q:\n%s", more, d.view())
	}
	kept := strings.TrimSuffix(strings.TrimPrefix(msg[0], "message: "), more)
	if rest, ok := strings.CutPrefix(heldMessage, kept); !ok || !strings.HasPrefix(strings.TrimLeft(rest, ",;:"), " ") {
		t.Errorf("the message is not cut at a word: %q", msg[0])
	}
	if strings.Contains(d.view(), "requested: ") {
		t.Errorf("the requested line repeats the status line's requester:\n%s", d.view())
	}

	f := heldReplaceAndForget()
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.Requested = "carol (person), as an AI proposal" })
	d = newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 1")
	if !strings.Contains(d.view(), "requested: carol (person), as an AI proposal") {
		t.Errorf("a requested line that says more than the requester is left out:\n%s", d.view())
	}

	d = newDriver(t, heldReplaceAndForget(), Options{Width: 200, Height: 60})
	d.openRun("r-7")
	d.waitText("Destroys 1")
	if s := d.view(); !strings.Contains(flat(s), heldMessage) || strings.Contains(s, more) || !strings.Contains(s, "requested: carol (person)") {
		t.Errorf("a roomy screen cuts its header:\n%s", s)
	}
}

// TestCutAtWordNeverCutsAWord checks the cut for every width from 1 to
// past the text: it fits, ends with the mark, and keeps whole words (a
// first word too long for the width is cut where it must be).
func TestCutAtWordNeverCutsAWord(t *testing.T) {
	const s = "message: plan destroys 2, max_destroy is 0; held for approval"
	for w := 1; w <= len(s)+1; w++ {
		got := cutAtWord(s, w, "…")
		if w >= len(s) {
			if got != s {
				t.Errorf("width %d: %q, want it whole", w, got)
			}
			continue
		}
		kept, ok := strings.CutSuffix(got, "…")
		if !ok || len([]rune(got)) > max(w, 1) {
			t.Errorf("width %d: %q does not fit or lacks the mark", w, got)
			continue
		}
		if w > len("message:")+1 && !strings.HasPrefix(strings.TrimLeft(s[len(kept):], ",;:"), " ") {
			t.Errorf("width %d: %q cuts a word", w, got)
		}
	}
}
