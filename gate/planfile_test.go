package gate

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The counts read from a saved plan file itself agree with those AnalyzePlan
// reads from its `tofu show -json` rendering, for real plans that create,
// delete, replace, forget and change nothing; a rendering of another plan
// is told apart.
func TestPlanFileActionsMatchTheRendering(t *testing.T) {
	set := plans(t)
	renders := map[string][]byte{"shrink": set.shrink, "replace": set.replace, "protect": set.protect, "nochange": set.noChange, "forget": set.forget}
	files := map[string]map[string]int{}
	for name, js := range renders {
		plan, err := os.ReadFile(filepath.Join(realDir, name+".tfplan"))
		if err != nil {
			t.Fatal(err)
		}
		file, err := PlanFileActions(plan)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files[name] = file
		sum, err := AnalyzePlan(js)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := SameActions(sum, file); !ok {
			t.Errorf("%s: the plan file and its own rendering disagree: %s", name, why)
		}
		changes, err := PlanFileChanges(plan)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ok, why := SameChanges(sum, changes); !ok {
			t.Errorf("%s: the plan file's addresses and its own rendering's disagree: %s", name, why)
		}
		if err := RenderingNamesItsAddresses(js); err != nil {
			t.Errorf("%s: its own rendering: %v", name, err)
		}
	}
	if files["shrink"][ActionDelete] != 2 || files["replace"][ActionReplace] != 3 || files["forget"][ActionForget] != 1 {
		t.Fatalf("plan file counts = %v", files)
	}
	// A rendering with the same counts naming other resources.
	replace, _ := os.ReadFile(filepath.Join(realDir, "replace.tfplan"))
	changes, _ := PlanFileChanges(replace)
	sum, _ := AnalyzePlan(set.replace)
	sum.ByAction[ActionReplace] = append([]string{"terraform_data.elsewhere"}, sum.ByAction[ActionReplace][1:]...)
	if ok, why := SameChanges(sum, changes); ok || !strings.Contains(why, "terraform_data.elsewhere") {
		t.Fatalf("a rendering replacing other resources passed (%s)", why)
	}
	// The addresses kept, what they are changed.
	for field, value := range map[string]any{"type": "aws_instance", "name": "q", "index": 7, "module_address": "module.m", "mode": "data"} {
		var doc map[string]any
		if err := json.Unmarshal(set.replace, &doc); err != nil {
			t.Fatal(err)
		}
		doc["resource_changes"].([]any)[0].(map[string]any)[field] = value
		js, _ := json.Marshal(doc)
		if err := RenderingNamesItsAddresses(js); err == nil {
			t.Errorf("a rendering whose first change has %s %v passed", field, value)
		}
	}
	// A harmless rendering handed over with a destructive plan.
	sum, _ = AnalyzePlan(set.noChange)
	if ok, _ := SameActions(sum, files["shrink"]); ok {
		t.Fatal("a no-change rendering passed for a plan that deletes two resources")
	}
}

// A file that is not a plan, or whose protobuf does not decode, is an error.
func TestPlanFileActionsRefusesWhatIsNoPlan(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("not a zip"), zipOf(t, "tfplan", []byte{0xff, 0xff, 0xff}), zipOf(t, "other", nil)} {
		if _, err := PlanFileActions(b); err == nil {
			t.Errorf("PlanFileActions(%q) succeeded", b)
		}
	}
}

func zipOf(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(body)
	w.Close()
	return buf.Bytes()
}

// PlanFileActions counts the resource changes of the saved plan file plan
// by the Action* constants, from the plan itself (its protobuf), not from
// a rendering of it: creates, updates, deletes, replaces, forgets,
// forget+creates and no-op imports; reads and no-ops are left out. A
// caller that measured a rendering (AnalyzePlan of `tofu show -json`) made
// elsewhere checks with it that the rendering is the plan's (SameActions).
func PlanFileActions(plan []byte) (map[string]int, error) {
	changes, err := PlanFileChanges(plan)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for a, addrs := range changes {
		out[a] = len(addrs)
	}
	return out, nil
}

// SameActions reports whether the summary of a rendering counts what the
// plan file counts (PlanFileActions), and if not, how they differ.
func SameActions(sum *Summary, file map[string]int) (bool, string) {
	got := map[string]int{}
	for a, addrs := range sum.ByAction {
		got[a] = len(addrs)
	}
	for _, a := range []string{ActionCreate, ActionUpdate, ActionDelete, ActionReplace, ActionForget, ActionForgetCreate, ActionImport} {
		if got[a] != file[a] {
			return false, fmt.Sprintf("the rendering counts %d %s, the plan file %d", got[a], a, file[a])
		}
	}
	return true, ""
}
