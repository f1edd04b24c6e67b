package planview

import "slices"

// Mask replaces every string of the change set by m of it, in place: the
// run's masker (mask.Masker.String), applied before the change set is stored
// or shown, so a secret the plan does not mark sensitive (a credential that
// reached a non-sensitive attribute, an output name, an address) is masked
// like it is in the run's log. Every string field is given to m: the
// format version, sections, actions and reasons, addresses, previous
// addresses and deposed keys, replace paths, attribute paths, values and
// fingerprints, JSON diff paths and values, diff lines' ops and text, and
// output names; but a fixed word is kept as it is (see fixedWord): a
// section, an OpenTofu action, an action_reason keyword, a diff line's op,
// a supported format version. Those are the same whatever the secrets, so
// they tell nothing of one, and a masked one would move a change out of its
// section (a sensitive "delete" in the plan would show every delete as
// "? ***" under "Other changes", after the creates) and tell which word the
// secret is.
func (cs *ChangeSet) Mask(m func(string) string) {
	fixed := keepFixedWords(m)
	cs.FormatVersion = fixed(cs.FormatVersion)
	for i := range cs.Resources {
		cs.Resources[i].mask(m, fixed)
	}
	for i := range cs.Drift {
		cs.Drift[i].mask(m, fixed)
	}
	for i := range cs.Outputs {
		o := &cs.Outputs[i]
		o.Name = m(o.Name)
		maskAll(o.Actions, fixed)
		o.Change.mask(m, fixed)
	}
}

// opWords are a line diff's ops ([DiffLine]) and OpenTofu's action names.
var opWords = []string{" ", "-", "+", "…", "no-op", "create", "read", "update", "delete", "forget"}

// fixedWord reports whether s is a word the change set holds whatever the
// plan's values: a section, an action name or a diff line's op, an
// action_reason keyword the view knows, a supported format version.
func fixedWord(s string) bool {
	_, reason := reasons[s]
	return reason || slices.Contains(Sections, s) || slices.Contains(opWords, s) || slices.Contains(SupportedFormatVersions, s)
}

// keepFixedWords is m, but for a fixed word (fixedWord), kept as it is.
// It masks the fields that hold fixed words (sections, actions, reasons,
// ops, the format version) only: an address, a path or a value that reads
// as one is masked all the same.
func keepFixedWords(m func(string) string) func(string) string {
	return func(s string) string {
		if fixedWord(s) {
			return s
		}
		return m(s)
	}
}

// mask masks r's values with m and its fixed words' fields with fixed.
func (r *Resource) mask(m, fixed func(string) string) {
	r.Section = fixed(r.Section)
	r.Address = m(r.Address)
	r.PreviousAddress = m(r.PreviousAddress)
	r.Deposed = m(r.Deposed)
	maskAll(r.Actions, fixed)
	r.Reason = fixed(r.Reason)
	maskAll(r.ReplacePaths, m)
	for i := range r.Attributes {
		r.Attributes[i].mask(m, fixed)
	}
}

func (a *Attribute) mask(m, fixed func(string) string) {
	a.Path = m(a.Path)
	a.Before = m(a.Before)
	a.After = m(a.After)
	a.BeforeFingerprint = m(a.BeforeFingerprint)
	a.AfterFingerprint = m(a.AfterFingerprint)
	if a.JSON != nil {
		for i := range a.JSON.Changes {
			a.JSON.Changes[i].mask(m, fixed)
		}
	}
	for i := range a.Lines {
		a.Lines[i].Op = fixed(a.Lines[i].Op)
		a.Lines[i].Text = m(a.Lines[i].Text)
	}
}

func maskAll(s []string, m func(string) string) {
	for i := range s {
		s[i] = m(s[i])
	}
}
