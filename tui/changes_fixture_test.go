package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchtender/switchtender/planview"
)

// everySection is the change set of planview's testdata with a change in
// every risk section: a replace with its reason and forcing path, a
// delete, a forget, a forget then create, an update with a JSON diff, a
// line diff and a sensitive value changed and one unchanged, a create, a
// move and an output.
func everySection(t testing.TB) *planview.ChangeSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "planview", "testdata", "changeset_every_section.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs planview.ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return &cs
}

// withChanges gives run r-7's proposal the change set cs.
func withChanges(f *fakeBackend, cs *planview.ChangeSet) {
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.Changes = cs })
}
