package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// A change set's lists are [] when empty, never null nor left out, in the
// run object and alone; the change set itself is left out of a run that
// has none; and the change set it was given is not changed.
func TestAChangeSetsListsAreNeverNullInJSON(t *testing.T) {
	cs := &planview.ChangeSet{FormatVersion: "1.2", Resources: []planview.Resource{{Section: planview.SectionDelete, Address: "terraform_data.x"}},
		Outputs: []planview.Output{{Name: "o"}}}
	v := RunView{Changes: cs}
	v.ID, v.Status = "1", store.StatusAwaitingApproval
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var run struct{ Changes json.RawMessage }
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	alone, err := json.Marshal(ChangesJSON(cs))
	if err != nil {
		t.Fatal(err)
	}
	for what, doc := range map[string]string{"the run's changes": string(run.Changes), "the change set alone": string(alone)} {
		if strings.Contains(doc, "null") {
			t.Errorf("%s holds null: %s", what, doc)
		}
		for _, want := range []string{`"drift":[]`, `"resources":[{`, `"actions":[]`, `"attributes":[]`, `"replace_paths":[]`, `"outputs":[{`} {
			if !strings.Contains(doc, want) {
				t.Errorf("%s lacks %s: %s", what, want, doc)
			}
		}
	}
	if cs.Resources[0].Actions != nil || cs.Drift != nil || cs.Outputs[0].Actions != nil {
		t.Errorf("writing the JSON changed the change set: %+v", cs)
	}
	none := RunView{}
	none.ID = "2"
	if b, _ := json.Marshal(none); strings.Contains(string(b), `"changes"`) {
		t.Errorf("a run without a change set has one: %s", b)
	}
	if b, _ := json.Marshal(ChangesJSON(&planview.ChangeSet{})); !strings.Contains(string(b), `"resources":[]`) {
		t.Errorf("an empty change set's resources: %s", b)
	}
}
