package planview

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// The -update flag rewrites the goldens: here, it makes the scenario plans
// again with real OpenTofu and rewrites testdata/plans and testdata/golden.
// Another test file of the package may define it too; init registers it
// only when none has (package variables are initialised before init runs).
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the goldens (testdata/plans and testdata/golden from real OpenTofu plans)")
	}
}

// updating reports whether the test runs with -update.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// goldenKey is the fingerprint key of the golden change sets.
var goldenKey = []byte("planview golden fingerprint key")

// maxCommittedPlan is the largest plan file kept in testdata/plans (no file
// over 200 KB is committed).
const maxCommittedPlan = 200 << 10

// scenarios lists the directories of testdata holding a v1 and a v2
// configuration: each is applied as v1, then planned as v2 (see makePlan).
func scenarios(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("testdata", e.Name(), "v2", "main.tf")); err == nil {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no scenarios in testdata")
	}
	return out
}

// tofuEnv is the environment tofu runs with: no CLI configuration file or
// TF_VAR_ from the machine, no checkpoint.
func tofuEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") || strings.HasPrefix(kv, "TF_VAR_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
}

func runTofu(t *testing.T, bin, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = tofuEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tofu %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// copyConfig replaces the configuration files of dir by those of src.
func copyConfig(t *testing.T, src, dir string) {
	t.Helper()
	old, _ := filepath.Glob(filepath.Join(dir, "*.*"))
	for _, f := range old {
		if strings.HasSuffix(f, ".tf") || strings.HasSuffix(f, ".json") {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// makePlan applies testdata/SCENARIO/v1 with local state, taints the
// addresses listed in testdata/SCENARIO/taint if there is one, plans
// testdata/SCENARIO/v2 into a saved plan and returns `tofu show -json` of
// it, normalised (see normalisePlan).
func makePlan(t *testing.T, bin, scenario string) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", scenario)
	copyConfig(t, filepath.Join(src, "v1"), dir)
	runTofu(t, bin, dir, "init", "-input=false", "-no-color")
	runTofu(t, bin, dir, "apply", "-auto-approve", "-input=false", "-no-color")
	if taint, err := os.ReadFile(filepath.Join(src, "taint")); err == nil {
		for _, addr := range strings.Fields(string(taint)) {
			runTofu(t, bin, dir, "taint", "-no-color", addr)
		}
	}
	copyConfig(t, filepath.Join(src, "v2"), dir)
	runTofu(t, bin, dir, "plan", "-input=false", "-no-color", "-out=plan.tfplan")
	return normalisePlan(runTofu(t, bin, dir, "show", "-json", "plan.tfplan"))
}

var (
	uuidPattern      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampPattern = regexp.MustCompile(`"timestamp":"[^"]*"`)
)

// normalisePlan makes a plan the same from run to run: each random
// terraform_data id becomes 00000000-0000-0000-0000-00000000000N (N in
// order of first appearance, the same length), the timestamp a fixed one.
func normalisePlan(plan []byte) []byte {
	ids := map[string]string{}
	plan = uuidPattern.ReplaceAllFunc(plan, func(id []byte) []byte {
		n, ok := ids[string(id)]
		if !ok {
			n = fmt.Sprintf("00000000-0000-0000-0000-%012d", len(ids)+1)
			ids[string(id)] = n
		}
		return []byte(n)
	})
	return timestampPattern.ReplaceAll(plan, []byte(`"timestamp":"2026-01-01T00:00:00Z"`))
}

// changeSetJSON is the golden form of a plan's change set.
func changeSetJSON(t *testing.T, plan []byte) []byte {
	t.Helper()
	cs, err := Build(plan, NewFingerprinter(goldenKey))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func planPath(scenario string) string {
	return filepath.Join("testdata", "plans", scenario+".json")
}

func goldenPath(scenario string) string {
	return filepath.Join("testdata", "golden", scenario+".json")
}

// sameAsGolden fails t unless got is the scenario's golden change set,
// showing a line diff.
func sameAsGolden(t *testing.T, scenario string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(goldenPath(scenario))
	if err != nil {
		t.Fatalf("%v (make it with go test ./planview -run TestRealPlansBuildToTheirGoldenChangeSets -update)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	var b strings.Builder
	for _, l := range lineDiff(string(want), string(got)) {
		fmt.Fprintf(&b, "%s %s\n", l.Op, l.Text)
	}
	t.Errorf("change set of %s differs from %s (- golden, + got):\n%s", scenario, goldenPath(scenario), b.String())
}

// TestRealPlansBuildToTheirGoldenChangeSets makes each scenario's plan with
// the pinned OpenTofu and checks its change set is the golden one; with
// -update it rewrites the plan and the golden instead.
func TestRealPlansBuildToTheirGoldenChangeSets(t *testing.T) {
	bin, err := tofubin.Ensure(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios(t) {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			plan := makePlan(t, bin, sc)
			got := changeSetJSON(t, plan)
			if !updating() {
				sameAsGolden(t, sc, got)
				return
			}
			if len(plan) > maxCommittedPlan {
				t.Fatalf("the %s plan is %d bytes, over the %d a committed file may have: make the scenario smaller", sc, len(plan), maxCommittedPlan)
			}
			for path, b := range map[string][]byte{planPath(sc): plan, goldenPath(sc): got} {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestCommittedPlansBuildToTheirGoldenChangeSets checks that the plans kept
// in testdata/plans (for readers that do not run tofu, such as the
// renderer's tests) still build to the goldens, and stay small.
func TestCommittedPlansBuildToTheirGoldenChangeSets(t *testing.T) {
	for _, sc := range scenarios(t) {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			plan, err := os.ReadFile(planPath(sc))
			if err != nil {
				t.Fatalf("%v (make it with go test ./planview -run TestRealPlansBuildToTheirGoldenChangeSets -update)", err)
			}
			if len(plan) > maxCommittedPlan {
				t.Errorf("%s is %d bytes, over %d", planPath(sc), len(plan), maxCommittedPlan)
			}
			sameAsGolden(t, sc, changeSetJSON(t, plan))
		})
	}
}

// committedChangeSet builds the change set of a committed scenario plan.
func committedChangeSet(t *testing.T, scenario string) *ChangeSet {
	t.Helper()
	plan, err := os.ReadFile(planPath(scenario))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Build(plan, NewFingerprinter(goldenKey))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
