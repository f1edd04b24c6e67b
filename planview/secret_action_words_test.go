package planview

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/exec/mask"
)

// TestASecretThatReadsAsAnActionWordNeverMovesAChange checks a real
// OpenTofu plan holding the sensitive value "delete" while it deletes
// terraform_data.db: the delete stays under "Deleted", marked "-", with its
// reason in words, not "? ***" under "Other changes" after the updates. A
// run's masker holding every section, action and op word (a secret answer
// can be any string of four bytes or more) leaves them as they are too,
// while a value that is such a word is still masked.
func TestASecretThatReadsAsAnActionWordNeverMovesAChange(t *testing.T) {
	text := Text(committedChangeSet(t, "sensitive_word"), 0)
	mustHave(t, text, "Deleted (1): destroyed\n  - terraform_data.db\n      why: no longer in the configuration\n")
	if strings.Contains(text, "Other changes") || strings.Contains(text, "***") {
		t.Fatalf("a sensitive \"delete\" changed the view:\n%s", text)
	}

	m := mask.New()
	m.Add(append(slices.Clone(Sections), "no-op", "create", "read", "update", "delete", "forget", "replace_because_cannot_update", "1.2")...)
	want := everySection(t)
	cs := everySection(t)
	cs.Resources[0].Attributes = append(cs.Resources[0].Attributes, Attribute{Path: "mode", Lines: []DiffLine{{Op: "-", Text: "update"}}})
	cs.Mask(m.String)
	if cs.FormatVersion != want.FormatVersion {
		t.Errorf("the format version reads %q", cs.FormatVersion)
	}
	for i, r := range cs.Resources {
		w := want.Resources[i]
		if r.Section != w.Section || !slices.Equal(r.Actions, w.Actions) || r.Reason != w.Reason {
			t.Errorf("%s is masked to section %q, actions %v, reason %q", w.Address, r.Section, r.Actions, r.Reason)
		}
	}
	if l := cs.Resources[0].Attributes[len(cs.Resources[0].Attributes)-1].Lines[0]; l.Op != "-" || l.Text != mask.Replacement {
		t.Errorf("a diff line of the secret \"update\" reads %+v", l)
	}
}
