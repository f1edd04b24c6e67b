package planview

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Fingerprinter makes the keyed fingerprints of sensitive values.
type Fingerprinter struct{ key []byte }

// NewFingerprinter returns a Fingerprinter under key (secret bytes only the
// server holds; seal.Key.Derive("plan fingerprint")).
func NewFingerprinter(key []byte) Fingerprinter { return Fingerprinter{key: key} }

// Build computes the change set of a saved plan from its JSON rendering.
// (Interim: sections and addresses only.)
func Build(planJSON []byte, fp Fingerprinter) (*ChangeSet, error) {
	var doc struct {
		FormatVersion   string `json:"format_version"`
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(planJSON, &doc); err != nil {
		return nil, fmt.Errorf("reading the plan JSON: %w", err)
	}
	cs := &ChangeSet{FormatVersion: doc.FormatVersion}
	for _, rc := range doc.ResourceChanges {
		sec := map[string]string{"delete,create": SectionReplace, "create,delete": SectionReplace, "delete": SectionDelete,
			"forget": SectionForget, "forget,create": SectionForgetThenCreate, "update": SectionUpdate, "create": SectionCreate, "read": SectionRead}[strings.Join(rc.Change.Actions, ",")]
		if sec == "" {
			continue
		}
		cs.Resources = append(cs.Resources, Resource{Section: sec, Address: rc.Address, Actions: rc.Change.Actions})
	}
	return cs, nil
}

// Mask replaces every string of cs by m of it (the run's masker).
func (cs *ChangeSet) Mask(m func(string) string) {
	for i := range cs.Resources {
		cs.Resources[i].Address = m(cs.Resources[i].Address)
	}
}
