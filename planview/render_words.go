package planview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchtender/switchtender/screentext"
)

// The pseudo-sections after the resources: outputs, drift, and the
// resources of a section this renderer does not know (never hidden).
const (
	sectionOutputs = "outputs"
	sectionDrift   = "drift"
	sectionOther   = "other"
)

// heading is a section's heading with the count of what it lists.
func heading(section string, n int) Line {
	words := map[string]string{
		SectionReplace:          "Replaced (%d): destroyed, then created again",
		SectionDelete:           "Deleted (%d): destroyed",
		SectionForget:           "Forgotten (%d): leaves state, not destroyed",
		SectionForgetThenCreate: "Forgotten, then created (%d): the old object leaves state, not destroyed",
		SectionUpdate:           "Updated in place (%d)",
		SectionCreate:           "Created (%d)",
		SectionRead:             "Read during apply (%d)",
		SectionImport:           "Imported (%d)",
		SectionMove:             "Moved (%d): old address → new",
		sectionOutputs:          "Outputs (%d)",
		sectionDrift:            "Changed outside OpenTofu (%d): drift, apart from what the plan does",
		sectionOther:            "Other changes (%d)",
	}[section]
	role := RoleHeading
	switch section {
	case SectionReplace, SectionDelete:
		role = RoleDestroy
	case SectionForget, SectionForgetThenCreate:
		role = RoleLeave
	}
	return Line{Role: role, Text: fmt.Sprintf(words, n)}
}

// countLines are the view's first lines: the destroy count the rules
// measure (every delete, replacements included), what leaves state
// (counted apart, never as a destroy), then what else changes.
func countLines(c Counts) []Line {
	destroy := RoleHeading
	if c.Destroy > 0 {
		destroy = RoleDestroy
	}
	out := []Line{{Role: destroy, Text: fmt.Sprintf("Destroys %d (%d replaced, %d deleted)", c.Destroy, c.Replace, c.Delete)}}
	if n := c.Forget + c.ForgetThenCreate; n > 0 {
		out = append(out, Line{Role: RoleLeave, Text: fmt.Sprintf("Leaves state, not destroyed: %d (%d forgotten, %d forgotten then created)",
			n, c.Forget, c.ForgetThenCreate)})
	}
	var also []string
	for _, k := range []struct {
		n    int
		word string
	}{{c.Update, "updated"}, {c.Create, "created"}, {c.Read, "read"}, {c.Import, "imported"}, {c.Move, "moved"},
		{c.Outputs, "output" + plural(c.Outputs) + " changed"}, {c.Drift, "changed outside OpenTofu"}} {
		if k.n > 0 {
			also = append(also, fmt.Sprintf("%d %s", k.n, k.word))
		}
	}
	if len(also) > 0 {
		out = append(out, Line{Role: RoleHeading, Text: "Also: " + strings.Join(also, ", ")})
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// mark is the action mark a resource's head line starts with, as tofu's
// own rendering marks it where it has one.
func mark(r *Resource) string {
	switch r.Section {
	case SectionReplace:
		if len(r.Actions) > 0 && r.Actions[0] == "create" {
			return "+/-"
		}
		return "-/+"
	case SectionDelete:
		return "-"
	case SectionForget:
		return "forget"
	case SectionForgetThenCreate:
		return "forget/+"
	case SectionUpdate:
		return "~"
	case SectionCreate:
		return "+"
	case SectionRead:
		return "<="
	case SectionImport:
		return "import"
	case SectionMove:
		return "moved"
	}
	return "? " + screentext.Field(strings.Join(r.Actions, ","))
}

// headRole is the role of a resource's head line.
func headRole(section string) Role {
	switch section {
	case SectionReplace, SectionDelete:
		return RoleRemoved
	case SectionForget, SectionForgetThenCreate:
		return RoleForgotten
	case SectionUpdate:
		return RoleChanged
	case SectionCreate:
		return RoleAdded
	}
	return RoleResource
}

// headText is a resource's head line: its mark, its address (old → new
// for a move) and what else is true of it.
func headText(r *Resource) string {
	addr := screentext.Field(r.Address)
	if r.Section == SectionMove {
		addr = screentext.Field(r.PreviousAddress) + " → " + addr
	}
	var quals []string
	if r.PreviousAddress != "" && r.Section != SectionMove {
		quals = append(quals, "moved from "+screentext.Field(r.PreviousAddress))
	}
	if r.Importing && r.Section != SectionImport {
		quals = append(quals, "imported")
	}
	if r.Deposed != "" {
		quals = append(quals, "deposed object "+screentext.Field(r.Deposed))
	}
	if r.Section == SectionReplace && mark(r) == "+/-" {
		quals = append(quals, "the new object is created first")
	}
	s := mark(r) + " " + addr
	if len(quals) > 0 {
		s += " (" + strings.Join(quals, "; ") + ")"
	}
	return s
}

// reasons are tofu's action_reason keywords in words (OpenTofu's JSON
// output format, "action_reason").
var reasons = map[string]string{
	"replace_because_cannot_update":              "a change that cannot be made in place",
	"replace_because_tainted":                    "the object is tainted",
	"replace_by_request":                         "replacement was requested (-replace)",
	"replace_by_triggers":                        "replace_triggered_by",
	"delete_because_no_resource_config":          "no longer in the configuration",
	"delete_because_no_module":                   "its module is no longer in the configuration",
	"delete_because_wrong_repetition":            "count or for_each no longer fits its instance key",
	"delete_because_count_index":                 "its index is beyond count",
	"delete_because_each_key":                    "its key is no longer in for_each",
	"delete_because_no_move_target":              "moved to an address the configuration does not have",
	"delete_because_enabled_false":               "enabled is false",
	"forgot_because_lifecycle_destroy_in_config": "a removed block with lifecycle { destroy = false }",
	"forgot_because_lifecycle_destroy_in_state":  "lifecycle { destroy = false } in its state",
	"read_because_config_unknown":                "its configuration is known only after apply",
	"read_because_dependency_pending":            "it depends on a change not applied yet",
	"read_because_check_nested":                  "it is nested in a check block",
}

// noteLines explain a head line: why (the plan's action_reason) and, for
// a replacement, the attribute paths that force it.
func noteLines(r *Resource) []Line {
	var out []Line
	if r.Reason != "" {
		why, ok := reasons[r.Reason]
		if !ok {
			why = screentext.Field(r.Reason)
		}
		if r.Reason == "delete_because_no_resource_config" && (r.Section == SectionForget || r.Section == SectionForgetThenCreate) {
			// OpenTofu 1.12 gives a removed block's forget this reason,
			// not forgot_because_lifecycle_destroy_in_config.
			why += "; a removed block with lifecycle { destroy = false } leaves the object in place"
		}
		out = append(out, Line{Role: RoleNote, Indent: 6, Text: "why: " + why})
	}
	if len(r.ReplacePaths) > 0 {
		paths := make([]string, len(r.ReplacePaths))
		for i, p := range r.ReplacePaths {
			paths[i] = screentext.Field(p)
		}
		out = append(out, Line{Role: RoleNote, Indent: 6, Text: "forced by: " + strings.Join(paths, ", ")})
	}
	return out
}

// hiddenLine says how many unchanged attributes are left out.
func hiddenLine(n, indent int) Line {
	return Line{Role: RoleHidden, Indent: indent, Text: fmt.Sprintf("… %d unchanged attribute%s hidden", n, plural(n))}
}

// knownAfterApply is how an unknown value reads.
const knownAfterApply = "(known after apply)"

// attrLines are one changed attribute path: "~ path = before -> after",
// "+ path = after", "- path = before"; a sensitive one says only whether
// it changed and shows its two fingerprints; a JSON string shows its
// changed JSON paths; a long string its line diff.
func attrLines(a *Attribute, indent int) []Line {
	path := screentext.Field(a.Path)
	switch {
	case a.Sensitive:
		return []Line{sensitiveLine(a, path, indent)}
	case a.JSON != nil:
		return jsonLines(a, path, indent)
	case len(a.Lines) > 0:
		return diffLines(a, path, indent)
	}
	op, role, val := valueChange(a)
	text := op + " " + path + " = " + val
	if a.ForcesReplacement {
		text += " (forces replacement)"
	}
	return []Line{{Role: role, Indent: indent, Text: text}}
}

// valueChange is the mark, role and value text of a plain attribute.
func valueChange(a *Attribute) (op string, role Role, val string) {
	after := literal(a.After)
	if a.Unknown {
		after = knownAfterApply
	}
	before := literal(a.Before)
	switch {
	case a.Before == "" && (a.After != "" || a.Unknown):
		return "+", RoleAdded, after
	case a.After == "" && !a.Unknown:
		return "-", RoleRemoved, before
	case a.Before == a.After && !a.Unknown:
		// An output whose value reads the same, which the plan still
		// changes: the JSON rendering carries no types, so only its type
		// can differ (tolist(["a"]) becoming the tuple ["a"]).
		return "~", RoleChanged, before + " -> " + after + " (the same value: only its type changes)"
	}
	return "~", RoleChanged, before + " -> " + after
}

// literal is a value as Build renders it, an OpenTofu literal whose strings
// are already quoted (every backslash, quote and control character inside
// them escaped), for the screen: screentext escapes what quoting leaves
// visible-but-hidden (a variation selector, a blank letter) and keeps the
// quoting's backslashes, so a newline in a value reads "\n" as OpenTofu
// writes it, not "\\n", and a value holding a backslash and an n still
// reads apart from it ("\\n").
func literal(s string) string { return screentext.Sentence(s) }

// sensitiveLine never shows a value: whether it changed, and the keyed
// fingerprints of both sides ("(none)" for a side without a value, "(known
// after apply)" for an after value not known until apply).
func sensitiveLine(a *Attribute, path string, indent int) Line {
	fp := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return screentext.Field(s)
	}
	after := fp(a.AfterFingerprint)
	if a.Unknown {
		after = knownAfterApply
	}
	var text string
	switch {
	case a.BeforeFingerprint == "" && (a.AfterFingerprint != "" || a.Unknown):
		text = fmt.Sprintf("+ %s = (sensitive) %s", path, after)
	case a.AfterFingerprint == "" && !a.Unknown && a.BeforeFingerprint != "":
		text = fmt.Sprintf("- %s = (sensitive) %s", path, fp(a.BeforeFingerprint))
	case a.Changed || a.Unknown:
		text = fmt.Sprintf("~ %s = (sensitive, changed) before %s, after %s", path, fp(a.BeforeFingerprint), after)
	default:
		text = fmt.Sprintf("  %s = (sensitive, unchanged) before %s, after %s", path, fp(a.BeforeFingerprint), after)
	}
	if a.ForcesReplacement {
		text += " (forces replacement)"
	}
	return Line{Role: RoleSensitive, Indent: indent, Text: text}
}

// jsonLines are a JSON string compared structurally: how many JSON paths
// changed, those listed and how many are not, or that only whitespace or
// key order differ (only when no path changed, whatever FormatOnly says).
func jsonLines(a *Attribute, path string, indent int) []Line {
	force := ""
	if a.ForcesReplacement {
		force = " (forces replacement)"
	}
	more := max(a.JSON.More, 0)
	if len(a.JSON.Changes) == 0 && more == 0 {
		return []Line{{Role: RoleHidden, Indent: indent, Text: "~ " + path + " = JSON, whitespace or key order only" + force}}
	}
	n := len(a.JSON.Changes) + more
	out := []Line{{Role: RoleChanged, Indent: indent, Text: fmt.Sprintf("~ %s = JSON, %d path%s changed:%s", path, n, plural(n), force)}}
	for i := range a.JSON.Changes {
		out = append(out, attrLines(&a.JSON.Changes[i], indent+4)...)
	}
	if more > 0 {
		out = append(out, Line{Role: RoleHidden, Indent: indent + 4,
			Text: fmt.Sprintf("… %d more changed path%s not shown (the first %d are)", more, plural(more), len(a.JSON.Changes))})
	}
	return out
}

// diffLines are a long or multi-line string as a line diff.
func diffLines(a *Attribute, path string, indent int) []Line {
	force := ""
	if a.ForcesReplacement {
		force = " (forces replacement)"
	}
	out := []Line{{Role: RoleChanged, Indent: indent, Text: "~ " + path + " = text, line by line:" + force}}
	for _, d := range a.Lines {
		l := Line{Indent: indent + 4}
		switch d.Op {
		case "-":
			l.Role, l.Text = RoleRemoved, "- "+changedLine(d.Text)
		case "+":
			l.Role, l.Text = RoleAdded, "+ "+changedLine(d.Text)
		case "…":
			l.Role, l.Text = RoleHidden, skipped(d.Text)
		default:
			l.Role, l.Text = RolePlain, "  "+screentext.Field(d.Text)
		}
		out = append(out, l)
	}
	return out
}

// changedLine is a removed or added line of a line diff escaped with
// screentext.Field, the spaces at its end written \x20: a line that only
// gains or loses trailing spaces would otherwise read as the line it
// replaces. (Field doubles a backslash that could start an escape, so a
// line holding "\x20" itself still reads otherwise.)
func changedLine(text string) string {
	body := strings.TrimRight(text, " ")
	return screentext.Field(body) + strings.Repeat(`\x20`, len(text)-len(body))
}

// skipped says how many lines a line diff leaves out: its Text is the
// number, or a phrase shown as it is.
func skipped(text string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil {
		return fmt.Sprintf("… %d unchanged line%s", n, plural(n))
	}
	return "… " + screentext.Field(text)
}
