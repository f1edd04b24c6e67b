package planview

import (
	"fmt"
	"strings"
	"testing"
)

// testFP fingerprints under a fixed test key.
var testFP = NewFingerprinter([]byte("planview test key"))

// planWith returns a format 1.2 plan document whose resource_changes are
// the given elements (JSON text).
func planWith(changes ...string) []byte {
	return []byte(`{"format_version":"1.2","terraform_version":"1.12.6","resource_changes":[` + strings.Join(changes, ",") + `]}`)
}

// change returns a resource_changes element of address with actions (a
// JSON array) and the other members of its change (JSON object members,
// e.g. `"before":{},"after":{}`).
func change(address, actions, members string) string {
	if members != "" {
		members = "," + members
	}
	return fmt.Sprintf(`{"address":%q,"mode":"managed","type":"terraform_data","name":"x","provider_name":"terraform.io/builtin/terraform","change":{"actions":%s%s}}`,
		address, actions, members)
}

func mustBuild(t *testing.T, plan []byte) *ChangeSet {
	t.Helper()
	cs, err := Build(plan, testFP)
	if err != nil {
		t.Fatalf("Build: %v\nplan: %s", err, plan)
	}
	return cs
}

// resourceAt returns the resource of cs at address, failing t when there
// is none.
func resourceAt(t *testing.T, cs *ChangeSet, address string) Resource {
	t.Helper()
	for _, r := range cs.Resources {
		if r.Address == address {
			return r
		}
	}
	t.Fatalf("no resource %s in %+v", address, cs.Resources)
	return Resource{}
}

// attributeAt returns the attribute of r at path, failing t when there is
// none.
func attributeAt(t *testing.T, r Resource, path string) Attribute {
	t.Helper()
	for _, a := range r.Attributes {
		if a.Path == path {
			return a
		}
	}
	t.Fatalf("no attribute %s in %s: %+v", path, r.Address, r.Attributes)
	return Attribute{}
}

func paths(r Resource) []string {
	out := make([]string, len(r.Attributes))
	for i, a := range r.Attributes {
		out[i] = a.Path
	}
	return out
}
