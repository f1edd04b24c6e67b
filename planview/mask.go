package planview

// Mask replaces every string of the change set by m of it, in place: the
// run's masker (mask.Masker.String), applied before the change set is stored
// or shown, so a secret the plan does not mark sensitive (a credential that
// reached a non-sensitive attribute, an output name, an address) is masked
// like it is in the run's log. Every string field is given to m: the
// format version, sections, actions and reasons, addresses, previous
// addresses and deposed keys, replace paths, attribute paths, values and
// fingerprints, JSON diff paths and values, diff lines' ops and text, and
// output names. A masker changes only the secrets it holds, so the fixed
// words (sections, actions, ops) come through unless a secret is one.
func (cs *ChangeSet) Mask(m func(string) string) {
	cs.FormatVersion = m(cs.FormatVersion)
	for i := range cs.Resources {
		cs.Resources[i].mask(m)
	}
	for i := range cs.Drift {
		cs.Drift[i].mask(m)
	}
	for i := range cs.Outputs {
		o := &cs.Outputs[i]
		o.Name = m(o.Name)
		maskAll(o.Actions, m)
		o.Change.mask(m)
	}
}

func (r *Resource) mask(m func(string) string) {
	r.Section = m(r.Section)
	r.Address = m(r.Address)
	r.PreviousAddress = m(r.PreviousAddress)
	r.Deposed = m(r.Deposed)
	maskAll(r.Actions, m)
	r.Reason = m(r.Reason)
	maskAll(r.ReplacePaths, m)
	for i := range r.Attributes {
		r.Attributes[i].mask(m)
	}
}

func (a *Attribute) mask(m func(string) string) {
	a.Path = m(a.Path)
	a.Before = m(a.Before)
	a.After = m(a.After)
	a.BeforeFingerprint = m(a.BeforeFingerprint)
	a.AfterFingerprint = m(a.AfterFingerprint)
	if a.JSON != nil {
		for i := range a.JSON.Changes {
			a.JSON.Changes[i].mask(m)
		}
	}
	for i := range a.Lines {
		a.Lines[i].Op = m(a.Lines[i].Op)
		a.Lines[i].Text = m(a.Lines[i].Text)
	}
}

func maskAll(s []string, m func(string) string) {
	for i := range s {
		s[i] = m(s[i])
	}
}
