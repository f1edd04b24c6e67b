package planview

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/gate"
)

// sameCounts checks one plan document against the gate: when the gate
// reads it, the view does too, and the view's destroy, replace, forget
// and import counts are the gate's (gate.Summary.Forget counts forgets and
// forgets then creates alike). The view may read a plan the gate refuses
// (the gate then holds the apply).
func sameCounts(t *testing.T, name string, plan []byte) {
	t.Helper()
	sum, gerr := gate.AnalyzePlan(plan)
	cs, verr := Build(plan, testFP)
	switch {
	case gerr != nil:
		return
	case verr != nil:
		t.Fatalf("%s: the gate measures the plan (destroy %d) but the view refuses it: %v\nplan: %s", name, sum.Destroy, verr, plan)
	}
	c := cs.Counts
	got := fmt.Sprintf("destroy %d, replace %d, forget %d, import %d", c.Destroy, c.Replace, c.Forget+c.ForgetThenCreate, c.Import)
	want := fmt.Sprintf("destroy %d, replace %d, forget %d, import %d", sum.Destroy, sum.Replace, sum.Forget, sum.Import)
	if got != want {
		t.Fatalf("%s: the view counts %s, the gate %s\nplan: %s\nview:\n%s", name, got, want, plan, Text(cs, 0))
	}
	if c.Destroy != c.Replace+c.Delete {
		t.Fatalf("%s: the view's destroy count %d is not its replaces %d and deletes %d", name, c.Destroy, c.Replace, c.Delete)
	}
}

// TestTheViewCountsTheDestroysTheGateMeasures checks the view's counts
// against gate.AnalyzePlan on plans of every shape the rules meet: the
// committed real OpenTofu plans, deposed objects and their deletes, data
// sources and ephemeral resources, replaces both ways, repeated addresses,
// imports, and a document that repeats a member (the list of changes, a
// change, its actions), which either reader could take either way and both
// refuse.
func TestTheViewCountsTheDestroysTheGateMeasures(t *testing.T) {
	committed, err := filepath.Glob(filepath.Join("testdata", "plans", "*.json"))
	if err != nil || len(committed) == 0 {
		t.Fatalf("no committed plans: %v", err)
	}
	for _, path := range committed {
		plan, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sameCounts(t, path, plan)
	}
	del := change("terraform_data.a", `["delete"]`, `"before":{},"after":null`)
	add := change("terraform_data.b", `["create"]`, `"before":null,"after":{}`)
	rc := func(members string) string { return `{"address":"terraform_data.a","mode":"managed",` + members + `}` }
	repeats := map[string][]byte{
		"the list of changes twice": []byte(`{"format_version":"1.2","resource_changes":[` + del + `],"resource_changes":[` + add + `]}`),
		"actions twice":             planWith(rc(`"change":{"actions":["delete"],"actions":["create"]}`)),
		"a change twice":            planWith(rc(`"change":{"actions":["delete"]},"change":{"actions":["create"]}`)),
		"a null change after one":   planWith(rc(`"change":{"actions":["delete"]},"change":null`)),
		"null actions after some":   planWith(rc(`"change":{"actions":["delete"],"actions":null}`)),
		"the mode twice":            planWith(`{"address":"terraform_data.a","mode":"ephemeral","mode":"managed","change":{"actions":["delete"]}}`),
		"the address twice":         planWith(`{"address":"terraform_data.a","address":"terraform_data.b","mode":"managed","change":{"actions":["delete"]}}`),
	}
	for name, plan := range repeats {
		if _, err := gate.AnalyzePlan(plan); err == nil {
			t.Errorf("%s: the gate measures a plan that repeats a member", name)
		}
		if _, err := Build(plan, testFP); err == nil || !strings.Contains(err.Error(), "repeated") {
			t.Errorf("%s: the view reads a plan that repeats a member (err %v)", name, err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 3000 {
		sameCounts(t, fmt.Sprintf("random plan %d", i), randomShapePlan(rng))
	}
}

// randomShapePlan is a plan of a few resource changes of random shapes:
// any action list OpenTofu writes and some it does not, any mode, deposed
// or not, importing or not, moved or not, addresses that repeat.
func randomShapePlan(rng *rand.Rand) []byte {
	actions := []string{`["delete"]`, `["delete","create"]`, `["create","delete"]`, `["forget"]`, `["forget","create"]`,
		`["update"]`, `["create"]`, `["read"]`, `["no-op"]`, `["delete","forget"]`, `[]`, `null`, `["Delete"]`, `["d\u0065lete"]`}
	modes := []string{"managed", "data", "ephemeral", ""}
	var changes []string
	for range rng.IntN(6) {
		var m []string
		m = append(m, fmt.Sprintf(`"address":"terraform_data.x[%d]"`, rng.IntN(3)))
		if mode := modes[rng.IntN(len(modes))]; mode != "" {
			m = append(m, fmt.Sprintf(`"mode":%q`, mode))
		}
		if rng.IntN(4) == 0 {
			m = append(m, `"deposed":"00000001"`)
		}
		if rng.IntN(5) == 0 {
			m = append(m, `"previous_address":"terraform_data.old"`)
		}
		c := `"actions":` + actions[rng.IntN(len(actions))]
		if rng.IntN(4) == 0 {
			c += `,"importing":{"id":"x"}`
		}
		m = append(m, `"change":{`+c+`,"before":null,"after":null}`)
		rng.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
		changes = append(changes, "{"+strings.Join(m, ",")+"}")
	}
	return planWith(changes...)
}
