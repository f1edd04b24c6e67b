package forge

import (
	"fmt"
	"strings"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// The commit statuses Switchtender posts: one per template on a pull
// request's head (PlanContext) and, once it merged, one per template on the
// merge commit (ApplyContext).

// Context prefixes of Switchtender's commit statuses.
const (
	planContext  = "switchtender/plan/"
	applyContext = "switchtender/apply/"
)

// PlanContext is the commit status context of template's plan on a pull
// request's head: "switchtender/plan/" and the template's name. A name
// the configuration accepts ([A-Za-z0-9][A-Za-z0-9_.-]*) is written as it
// is; any other passes through screentext.Field.
func PlanContext(template string) string { return planContext + screentext.Field(template) }

// ApplyContext is the commit status context of template's apply on the
// merge commit: "switchtender/apply/" and the template's name, written
// as PlanContext writes it.
func ApplyContext(template string) string { return applyContext + screentext.Field(template) }

// StatusOf is the commit status that says where rr stands, under context
// (PlanContext or ApplyContext: an apply's context makes a succeeded run
// "applied", a plan's "planned"). State: a run superseded by a newer head
// (rr.SupersededBy set) is StateSuperseded; queued, running and awaiting
// approval are StatePending; succeeded is StateSuccess; refused, failed,
// rejected, cancelled, interrupted, stale and a status outside the store's
// vocabulary are StateFailure. Description says it in at most
// MaxDescription bytes, passed through screentext.Sentence with every
// value in it through screentext.Field (a value too long to fit is cut on
// a rune boundary, outside any escape, and ends with "…"); TargetURL is
// left empty.
func StatusOf(rr RunReport, context string) Status {
	apply := strings.HasPrefix(context, applyContext)
	return Status{Context: context, State: stateOf(rr), Description: describe(rr, apply)}
}

// stateOf is the commit status state of rr.
func stateOf(rr RunReport) State {
	if rr.SupersededBy != "" {
		return StateSuperseded
	}
	switch rr.Status {
	case store.StatusQueued, store.StatusRunning, store.StatusAwaitingApproval:
		return StatePending
	case store.StatusSucceeded:
		return StateSuccess
	}
	return StateFailure
}

// statusWords are the words a person reads for each store status, after
// the store's vocabulary (an underscore read as a space) but for
// succeeded, which says what succeeded: "planned" or "applied".
var statusWords = map[store.Status]string{
	store.StatusQueued:           "queued",
	store.StatusRunning:          "running",
	store.StatusAwaitingApproval: "awaiting approval",
	store.StatusFailed:           "failed",
	store.StatusCancelled:        "cancelled",
	store.StatusInterrupted:      "interrupted",
	store.StatusRejected:         "rejected",
	store.StatusRefused:          "refused",
	store.StatusStale:            "stale",
}

// statusWord is how the comment and the commit status name where rr
// stands: "superseded" when a newer head replaced it, "planned" or
// (apply) "applied" when it succeeded, else the status's words. ok is
// false for a status outside the store's vocabulary, whose word is then
// the status itself, not escaped: the caller escapes it as a value.
func statusWord(rr RunReport, apply bool) (word string, ok bool) {
	switch {
	case rr.SupersededBy != "":
		return "superseded", true
	case rr.Status == store.StatusSucceeded && apply:
		return "applied", true
	case rr.Status == store.StatusSucceeded:
		return "planned", true
	}
	if w, ok := statusWords[rr.Status]; ok {
		return w, true
	}
	return string(rr.Status), false
}

// describe is a commit status's description of rr (see StatusOf).
func describe(rr RunReport, apply bool) string {
	word, ok := statusWord(rr, apply)
	switch {
	case !ok:
		return fitDescription("status ", word, "", "status unknown")
	case rr.SupersededBy != "":
		return fitDescription("superseded by ", shortSHA(rr.SupersededBy), "", word)
	}
	if d := describeStatus(rr, apply, word); d != "" {
		return d
	}
	if m := firstLine(rr.Message); m != "" && rr.Status.Final() && rr.Status != store.StatusSucceeded {
		return fitDescription(word+": ", m, "", word)
	}
	return word
}

// describeStatus is the description of a status that names more than
// the run's message: the counts of a plan, the approve command, the
// first finding, who approved or rejected, why it is stale; "" for
// another status or when what it names is missing.
func describeStatus(rr RunReport, apply bool, word string) string {
	switch rr.Status {
	case store.StatusSucceeded:
		if !apply {
			return fitDescription("planned: ", "", screentext.PlanCounts(rr.Add, rr.Change, rr.Destroy, rr.Replace, rr.Forget), word)
		}
		if rr.ApprovedBy != "" {
			return fitDescription("applied, approved by ", rr.ApprovedBy, "", word)
		}
	case store.StatusAwaitingApproval:
		if rr.Digest != "" {
			return fitDescription("awaiting approval: approve "+screentext.Field(rr.RunID)+" --digest ", rr.Digest, " over SSH", word+" over SSH")
		}
	case store.StatusRefused:
		if len(rr.Findings) > 0 {
			return fitDescription("refused: the configuration scan found ", findingName(rr.Findings[0]), moreFindings(len(rr.Findings)-1), word)
		}
	case store.StatusRejected:
		if rr.RejectedBy != "" {
			return fitDescription("rejected by ", rr.RejectedBy, "", word)
		}
	case store.StatusStale:
		if m := firstLine(rr.StaleReason); m != "" {
			return fitDescription("stale: ", m, "", word)
		}
	}
	return ""
}

// findingName is how a description names a finding: its address, or "the
// root module" for a finding of none.
func findingName(f store.Finding) string {
	if f.Address == "" {
		return "a finding in the root module"
	}
	return f.Address
}

// moreFindings is " and N more" for n more findings, "" for none.
func moreFindings(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// firstLine is s's first line that holds more than spaces, trimmed.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// fitDescription is prefix, screentext.Field(value) and suffix as one
// sentence (screentext.Sentence) of at most MaxDescription bytes: value is
// cut to fit (on a rune boundary, before escaping, ended by "…"); when
// prefix and suffix leave no room for it, fallback (words without values)
// is the description. prefix and suffix are the server's words, any value
// in them already passed through screentext.Field.
func fitDescription(prefix, value, suffix, fallback string) string {
	room := MaxDescription - len(screentext.Sentence(prefix+suffix))
	if room < 0 || (value != "" && room < len(ellipsis)+1) {
		return screentext.Sentence(fallback)
	}
	v, cut := cutEscaped(value, room, screentext.Field)
	if cut {
		v += ellipsis
	}
	return screentext.Sentence(prefix + v + suffix)
}

// shortSHA is a commit hash's first 7 digits, the abbreviation every
// forge shows; s itself when it is no hash (7 to 64 hex digits), for the
// caller to escape as a value.
func shortSHA(s string) string {
	if len(s) < 7 || len(s) > 64 || strings.Trim(s, "0123456789abcdefABCDEF") != "" {
		return s
	}
	return s[:7]
}
