package planview

import (
	"slices"
	"testing"
)

// everyAction is a plan with one change of each kind, out of order.
func everyAction() []byte {
	obj := `"before":{"input":"a"},"after":{"input":"b"}`
	return planWith(
		change("terraform_data.created", `["create"]`, `"before":null,"after":{"input":"b"}`),
		change("terraform_data.b_replaced", `["delete","create"]`, obj),
		change("terraform_data.a_replaced", `["create","delete"]`, obj),
		change("terraform_data.updated", `["update"]`, obj),
		change("terraform_data.deleted", `["delete"]`, `"before":{"input":"a"},"after":null`),
		change("terraform_data.forgotten", `["forget"]`, `"before":{"input":"a"},"after":null`),
		change("terraform_data.forgotten_then_created", `["forget","create"]`, obj),
		`{"address":"data.terraform_remote_state.read","mode":"data","type":"terraform_remote_state","name":"read","change":{"actions":["read"],"before":null,"after":{"backend":"local"}}}`,
		change("terraform_data.imported", `["no-op"]`, `"before":{"input":"a"},"after":{"input":"a"},"importing":{"id":"abc"}`),
		`{"address":"terraform_data.moved","previous_address":"terraform_data.was","mode":"managed","type":"terraform_data","name":"moved","change":{"actions":["no-op"],"before":{},"after":{}}}`,
		change("terraform_data.unchanged", `["no-op"]`, `"before":{"input":"a"},"after":{"input":"a"}`),
		`{"address":"ephemeral.random_password.p","mode":"ephemeral","type":"random_password","name":"p","change":{"actions":["open"]}}`,
		`{"address":"terraform_data.moved_and_updated","previous_address":"terraform_data.before_move","mode":"managed","type":"terraform_data","name":"m","change":{"actions":["update"],"before":{"input":"a"},"after":{"input":"b"}}}`,
		`{"address":"terraform_data.old","mode":"managed","type":"terraform_data","name":"old","deposed":"00000001","change":{"actions":["delete"],"before":{"input":"a"},"after":null}}`,
	)
}

func TestChangesAreInRiskOrderThenByAddress(t *testing.T) {
	cs := mustBuild(t, everyAction())
	var got [][2]string
	for _, r := range cs.Resources {
		got = append(got, [2]string{r.Section, r.Address})
	}
	want := [][2]string{
		{SectionReplace, "terraform_data.a_replaced"},
		{SectionReplace, "terraform_data.b_replaced"},
		{SectionDelete, "terraform_data.deleted"},
		{SectionDelete, "terraform_data.old"},
		{SectionForget, "terraform_data.forgotten"},
		{SectionForgetThenCreate, "terraform_data.forgotten_then_created"},
		{SectionUpdate, "terraform_data.moved_and_updated"},
		{SectionUpdate, "terraform_data.updated"},
		{SectionCreate, "terraform_data.created"},
		{SectionRead, "data.terraform_remote_state.read"},
		{SectionImport, "terraform_data.imported"},
		{SectionMove, "terraform_data.moved"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections and addresses\n got %v\nwant %v", got, want)
	}
	if a := resourceAt(t, cs, "terraform_data.a_replaced").Actions; !slices.Equal(a, []string{"create", "delete"}) {
		t.Errorf("create_before_destroy actions %v, want as the plan wrote them", a)
	}
}

func TestCountsSayWhatEachSectionHolds(t *testing.T) {
	cs := mustBuild(t, everyAction())
	want := Counts{Replace: 2, Delete: 2, Destroy: 4, Forget: 1, ForgetThenCreate: 1, Update: 2, Create: 1, Read: 1, Import: 1, Move: 2}
	if cs.Counts != want {
		t.Errorf("counts\n got %+v\nwant %+v", cs.Counts, want)
	}
	forget := mustBuild(t, planWith(change("terraform_data.f", `["forget"]`, `"before":{"input":"a"}`)))
	if forget.Counts.Destroy != 0 || forget.Counts.Forget != 1 {
		t.Errorf("a forget alone counts %+v", forget.Counts)
	}
}

func TestPlainNoOpsAndEphemeralResourcesAreLeftOut(t *testing.T) {
	cs := mustBuild(t, everyAction())
	for _, r := range cs.Resources {
		if r.Address == "terraform_data.unchanged" || r.Address == "ephemeral.random_password.p" {
			t.Errorf("%s is listed (%s)", r.Address, r.Section)
		}
	}
}

func TestDeletesForgetsAndNoOpsListNoAttributes(t *testing.T) {
	cs := mustBuild(t, everyAction())
	for _, addr := range []string{"terraform_data.deleted", "terraform_data.forgotten", "terraform_data.imported", "terraform_data.moved", "terraform_data.old"} {
		if r := resourceAt(t, cs, addr); len(r.Attributes) != 0 || r.Unchanged != 0 {
			t.Errorf("%s lists %+v, %d unchanged", addr, r.Attributes, r.Unchanged)
		}
	}
}

func TestADeposedObjectKeepsItsKey(t *testing.T) {
	cs := mustBuild(t, everyAction())
	if r := resourceAt(t, cs, "terraform_data.old"); r.Deposed != "00000001" {
		t.Errorf("deposed %q", r.Deposed)
	}
}

func TestAMoveIsListedWithItsPreviousAddress(t *testing.T) {
	cs := committedChangeSet(t, "moved")
	moved := resourceAt(t, cs, "terraform_data.new_name")
	if moved.Section != SectionMove || moved.PreviousAddress != "terraform_data.old_name" {
		t.Errorf("a plain move: %+v", moved)
	}
	updated := resourceAt(t, cs, "terraform_data.moved_and_changed")
	if updated.Section != SectionUpdate || updated.PreviousAddress != "terraform_data.renamed_and_changed" {
		t.Errorf("a move that updates: %+v", updated)
	}
	if a := attributeAt(t, updated, "input"); a.Before != `"before the move"` || a.After != `"after the move"` {
		t.Errorf("input of the moved resource: %+v", a)
	}
	if cs.Counts.Move != 2 || cs.Counts.Update != 1 {
		t.Errorf("counts %+v", cs.Counts)
	}
}

func TestAnImportThatChangesNothingIsAnImport(t *testing.T) {
	cs := committedChangeSet(t, "import")
	r := resourceAt(t, cs, "terraform_data.adopted")
	if r.Section != SectionImport || !r.Importing || cs.Counts.Import != 1 {
		t.Errorf("import: %+v, counts %+v", r, cs.Counts)
	}
}

func TestAForgottenResourceIsAForgetNotADestroy(t *testing.T) {
	cs := committedChangeSet(t, "forget")
	r := resourceAt(t, cs, "terraform_data.leaves_state")
	if r.Section != SectionForget || !slices.Equal(r.Actions, []string{"forget"}) || r.Reason == "" {
		t.Errorf("forget: %+v", r)
	}
	if cs.Counts.Destroy != 0 || cs.Counts.Forget != 1 || len(cs.Resources) != 1 {
		t.Errorf("counts %+v, resources %+v", cs.Counts, cs.Resources)
	}
}

func TestAReplaceSaysWhy(t *testing.T) {
	for sc, want := range map[string]struct{ reason, actions string }{
		"tainted":               {"replace_because_tainted", "delete,create"},
		"replace_triggers":      {"replace_because_cannot_update", "delete,create"},
		"create_before_destroy": {"replace_because_cannot_update", "create,delete"},
	} {
		cs := committedChangeSet(t, sc)
		if len(cs.Resources) != 1 {
			t.Fatalf("%s: %+v", sc, cs.Resources)
		}
		r := cs.Resources[0]
		if r.Section != SectionReplace || r.Reason != want.reason || joinActions(r.Actions) != want.actions {
			t.Errorf("%s: section %s reason %q actions %v, want replace %q %s", sc, r.Section, r.Reason, r.Actions, want.reason, want.actions)
		}
		if cs.Counts.Destroy != 1 || cs.Counts.Replace != 1 {
			t.Errorf("%s: counts %+v", sc, cs.Counts)
		}
	}
}

func joinActions(a []string) string {
	out := ""
	for i, s := range a {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}
