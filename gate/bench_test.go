package gate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syntheticPlan writes a `tofu show -json` document shaped like OpenTofu
// v1.12.6's with n resource changes over a few resource types and every
// destroying action, each change also present in prior_state and
// planned_values as tofu writes them. n = 10,000 gives about 19 MiB.
func syntheticPlan(n int) []byte {
	types := []string{"terraform_data", "aws_instance", "aws_db_instance", "aws_s3_bucket", "google_compute_instance"}
	actions := []string{`["delete","create"]`, `["delete"]`, `["create","delete"]`, `["update"]`, `["create"]`, `["forget"]`}
	var rc, prior, planned strings.Builder
	for i := range n {
		typ := types[i%len(types)]
		act := actions[i%len(actions)]
		addr := fmt.Sprintf("module.app_%d.%s.res[%d]", i%17, typ, i)
		if i%50 == 0 {
			addr = fmt.Sprintf("%s.protected_%d", typ, i)
		}
		obj := fmt.Sprintf(`{"id":"%08x-a9dc-375e-b719-4d5ca4198ee5","input":{"name":"r-%d","payload":"lorem-ipsum-dolor-sit-amet-%d","tier":%d},"output":{"name":"r-%d","payload":"lorem-ipsum-dolor-sit-amet-%d","tier":%d},"triggers_replace":["a","x%d"]}`,
			i, i, i, i%4, i, i, i%4, i)
		reason := ""
		if strings.Contains(act, `"delete","create"`) || strings.Contains(act, `"create","delete"`) {
			reason = `,"action_reason":"replace_because_cannot_update"`
		}
		mark := `{"input":{},"output":{},"triggers_replace":[false,false]}`
		if i > 0 {
			rc.WriteByte(',')
			prior.WriteByte(',')
			planned.WriteByte(',')
		}
		head := fmt.Sprintf(`"address":%q,"mode":"managed","type":%q,"name":"res","index":%d,"provider_name":"registry.opentofu.org/hashicorp/%s"`,
			addr, typ, i, strings.SplitN(typ, "_", 2)[0])
		fmt.Fprintf(&rc, `{%s,"change":{"actions":%s,"before":%s,"after":%s,"after_unknown":{"id":true,"input":{},"output":true,"triggers_replace":[false,false]},"before_sensitive":%s,"after_sensitive":%s,"replace_paths":[["triggers_replace"]]}%s}`,
			head, act, obj, obj, mark, mark, reason)
		fmt.Fprintf(&prior, `{%s,"schema_version":0,"values":%s,"sensitive_values":%s}`, head, obj, mark)
		fmt.Fprintf(&planned, `{%s,"schema_version":0,"values":%s,"sensitive_values":%s}`, head, obj, mark)
	}
	return []byte(`{"format_version":"1.2","terraform_version":"1.12.6","variables":{"n":{"value":10000}},` +
		`"planned_values":{"root_module":{"resources":[` + planned.String() + `]}},` +
		`"resource_changes":[` + rc.String() + `],` +
		`"prior_state":{"format_version":"1.0","terraform_version":"1.12.6","values":{"root_module":{"resources":[` + prior.String() + `]}}},` +
		`"configuration":{"root_module":{"variables":{"n":{"type":"number"}}}},"timestamp":"2026-01-01T00:00:00Z","errored":false}`)
}

func TestSyntheticPlanReadsAsTofuOutput(t *testing.T) {
	doc := syntheticPlan(60)
	if !json.Valid(doc) {
		t.Fatal("synthetic plan is not JSON")
	}
	s, err := AnalyzePlan(doc)
	if err != nil {
		t.Fatal(err)
	}
	// 60 changes over 6 actions: 10 of each.
	if s.Destroy != 30 || s.Replace != 20 || s.Add != 10 || s.Change != 10 || s.Forget != 10 {
		t.Errorf("synthetic summary %+v", s)
	}
}

// opaCLI returns an `opa` binary of the OPA version this module requires:
// $SWITCHTENDER_OPA, or one built once into the user cache directory from
// the module (go mod download, then go build inside it; the module's cmd
// packages need its own go.sum, so it is not built from this module).
func opaCLI(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("SWITCHTENDER_OPA"); p != "" {
		return p
	}
	// Test binaries carry no module list, so ask the go command which OPA
	// version this module requires.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/open-policy-agent/opa").Output()
	if err != nil {
		b.Fatalf("go list -m github.com/open-policy-agent/opa: %v", err)
	}
	version := strings.TrimSpace(string(out))
	cache, err := os.UserCacheDir()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(cache, "switchtender", "opa-"+version, "opa")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	b.Logf("building opa %s into %s (once)", version, bin)
	out, err = exec.Command("go", "mod", "download", "-json", "github.com/open-policy-agent/opa@"+version).Output()
	if err != nil {
		b.Fatalf("go mod download opa: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		b.Fatalf("go mod download opa: no module directory in %s", out)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		b.Fatal(err)
	}
	tmp := bin + ".tmp"
	build := exec.Command("go", "build", "-o", tmp, ".")
	build.Dir = mod.Dir
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building opa: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		b.Fatal(err)
	}
	return bin
}

// benchPlanEnv names a gzipped `tofu show -json` plan to benchmark instead
// of the one in testdata.
const benchPlanEnv = "SWITCHTENDER_BENCH_PLAN"

// realBenchPlan reads the real plan the benchmark measures: the file
// $SWITCHTENDER_BENCH_PLAN names, or testdata/plan-10k-changes.json.gz.
var realBenchPlan = sync.OnceValues(func() ([]byte, error) {
	path := os.Getenv(benchPlanEnv)
	if path == "" {
		path = filepath.Join("testdata", "plan-10k-changes.json.gz")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the benchmark's real plan: %w (set %s to a gzipped tofu show -json)", err, benchPlanEnv)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
})

// BenchmarkGate measures the gate's work on a proposal of 10,000 resource
// changes — the destroy count (AnalyzePlan) and the limit_destroys plan_gate,
// through Decide from the plan JSON bytes — against `opa eval` of the same
// policy on the same input document (the plan under "plan", with the summary
// and the run), timed in the same iterations. Inputs: a synthetic plan of
// about 19 MiB, and testdata/plan-10k-changes.json.gz (a real OpenTofu
// v1.12.6 plan over 10,000 terraform_data resources: 8,000 replaces and
// 2,000 deletes; $SWITCHTENDER_BENCH_PLAN names another). Metrics: inproc-s and cli-s per evaluation, and
// cli/inproc, how many times faster the gate is. Target: inproc-s < 1 and
// cli/inproc >= 3. The opa binary is built once (see opaCLI); tests do not
// need it.
func BenchmarkGate(b *testing.B) {
	policyPath, err := filepath.Abs(filepath.Join("testdata", "limit_destroys.rego"))
	if err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(policyPath)
	if err != nil {
		b.Fatal(err)
	}
	policy, err := CompilePolicy(context.Background(), policyPath, src)
	if err != nil {
		b.Fatal(err)
	}
	opa := opaCLI(b)

	inputs := []struct {
		name string
		plan func() ([]byte, error)
	}{
		{"synthetic-10k", func() ([]byte, error) { return syntheticPlan(10000), nil }},
		{"tofu-10k", realBenchPlan},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			plan, err := in.plan()
			if err != nil {
				b.Fatal(err)
			}
			rules := []*Rule{{Name: "few", MaxDestroy: intp(100)}, {Name: "policy", Policy: policy}}
			req := Request{Template: "network", Kind: KindApply, Requester: "alice"}
			// opa eval gets the input document the gate builds: the plan
			// under "plan", with the summary and the run.
			sum, err := AnalyzePlan(plan)
			if err != nil {
				b.Fatal(err)
			}
			rest, err := json.Marshal(map[string]any{"summary": sum.inputMap(), "run": map[string]any{
				"template": req.Template, "kind": req.Kind, "requester": req.Requester, "requester_kind": "person"}})
			if err != nil {
				b.Fatal(err)
			}
			file := filepath.Join(b.TempDir(), "input.json")
			input := slices.Concat([]byte(`{"plan":`), plan, []byte(","), rest[1:])
			if err := os.WriteFile(file, input, 0o600); err != nil {
				b.Fatal(err)
			}

			// One untimed run each: both must decide the same.
			d := Decide(context.Background(), req, plan, nil, rules, time.Minute)
			cliDeny := runOPA(b, opa, policyPath, file)
			if len(d.Refusals) != len(cliDeny) || len(d.Refusals) == 0 {
				b.Fatalf("gate refusals %+v, opa eval deny %q: want the same, non-empty", d.Refusals, cliDeny)
			}

			var inproc, cli time.Duration
			for b.Loop() {
				start := time.Now()
				d := Decide(context.Background(), req, plan, nil, rules, time.Minute)
				inproc += time.Since(start)
				if d.Outcome != Refuse {
					b.Fatalf("outcome %s, want refuse", d.Outcome)
				}
				start = time.Now()
				runOPA(b, opa, policyPath, file)
				cli += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(len(plan))/(1<<20), "MiB")
			b.ReportMetric(inproc.Seconds()/n, "inproc-s")
			b.ReportMetric(cli.Seconds()/n, "cli-s")
			b.ReportMetric(cli.Seconds()/inproc.Seconds(), "cli/inproc")
		})
	}
}

// runOPA runs `opa eval` on the policy and input file and returns the deny
// set.
func runOPA(b *testing.B, opa, policy, input string) []string {
	cmd := exec.Command(opa, "eval", "--format", "json", "--data", policy, "--input", input, PolicyQuery+".deny")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("opa eval: %v\n%s", err, stderr.String())
	}
	var res struct {
		Result []struct {
			Expressions []struct{ Value []string }
		}
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Result) != 1 || len(res.Result[0].Expressions) != 1 {
		b.Fatalf("opa eval output %s: %v", out, err)
	}
	return res.Result[0].Expressions[0].Value
}
