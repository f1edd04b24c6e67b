package runstep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// fakeEnv is an executor whose tool processes are canned: capture returns
// captured[name], and every step and process is noted.
type fakeEnv struct {
	dir, private string
	masker       *mask.Masker
	captured     map[string][]byte
	steps, said  []string
	tools        []string // the tool processes started, by name
	checkErr     error
}

func (e *fakeEnv) Step(name string)                { e.steps = append(e.steps, name) }
func (e *fakeEnv) Check(ctx context.Context) error { return e.checkErr }
func (e *fakeEnv) Tool(ctx context.Context, name string, args []string) (exec.Result, error) {
	e.tools = append(e.tools, name)
	return exec.Result{}, nil
}
func (e *fakeEnv) Capture(ctx context.Context, name string, args []string) ([]byte, error) {
	b, ok := e.captured[name]
	if !ok {
		return nil, &StepFailed{Step: name, Exit: 1}
	}
	return b, nil
}
func (e *fakeEnv) Say(format string, args ...any) { e.said = append(e.said, format) }
func (e *fakeEnv) Dir() string                    { return e.dir }
func (e *fakeEnv) Private() string                { return e.private }
func (e *fakeEnv) Masker() *mask.Masker           { return e.masker }

func newFakeEnv(t *testing.T) *fakeEnv {
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	return &fakeEnv{dir: t.TempDir(), private: private, masker: mask.New(), captured: map[string][]byte{}}
}

// Run names each step to the executor before it runs and stops at the first
// step that ends the run, or at a failed check, running nothing after it.
func TestRunStopsAtTheFirstStepThatEndsTheRun(t *testing.T) {
	env := newFakeEnv(t)
	var ran []string
	step := func(name string, err error) Step[*fakeEnv] {
		return Step[*fakeEnv]{Name: name, Do: func(context.Context, *fakeEnv) error { ran = append(ran, name); return err }}
	}
	err := Run(context.Background(), env, []Step[*fakeEnv]{step("a", nil), step("b", End(store.StatusRefused, -1, "no")), step("c", nil)})
	var o *Outcome
	if !errors.As(err, &o) || o.Status != store.StatusRefused || strings.Join(ran, ",") != "a,b" || strings.Join(env.steps, ",") != "a,b" {
		t.Fatalf("err %v, ran %v, named %v", err, ran, env.steps)
	}
	env.checkErr, ran = errors.New("the directory moved"), nil
	if err := Run(context.Background(), env, []Step[*fakeEnv]{step("a", nil)}); err != env.checkErr || len(ran) != 0 {
		t.Fatalf("a failed check: %v, ran %v", err, ran)
	}
}

// The state's sensitive values join the masker, a local state read from
// its file; a state that cannot be read fails the run before anything
// prints.
func TestStateSecretsMaskWhatTheStateMarksSensitive(t *testing.T) {
	env := newFakeEnv(t)
	state := `{"version":4,"lineage":"l","serial":1,"resources":[{"mode":"managed","type":"t","name":"n","instances":[{"attributes":{"password":"hunter2-secret"},"sensitive_attributes":[[{"type":"get_attr","value":"password"}]]}]}]}`
	if err := os.WriteFile(filepath.Join(env.dir, "terraform.tfstate"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := StateSecrets(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if got := env.masker.String("pw hunter2-secret"); strings.Contains(got, "hunter2-secret") {
		t.Errorf("the state's sensitive value is not masked: %q", got)
	}
	if err := os.WriteFile(filepath.Join(env.dir, "terraform.tfstate"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := StateSecrets(context.Background(), env); err == nil || !strings.Contains(err.Error(), "nothing ran past init") {
		t.Errorf("an unreadable state: %v", err)
	}
}

// A plan file whose digest is not the released one is refused, and a plan
// whose sensitive values cannot be read is refused before anything prints.
func TestSavedPlanIsRefusedUnlessReleasedAndMaskable(t *testing.T) {
	env := newFakeEnv(t)
	path, err := WritePlan(env, []byte("plan bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != env.private {
		t.Errorf("the plan was written to %s, outside the private directory", path)
	}
	digest := seal.Digest([]byte("plan bytes"))
	if err := VerifyPlan(path, digest); err != nil {
		t.Errorf("the released plan: %v", err)
	}
	var o *Outcome
	if err := VerifyPlan(path, "sha256:other"); !errors.As(err, &o) || o.Status != store.StatusFailed || !strings.Contains(o.Msg, "is not the released sha256:other") {
		t.Errorf("another digest: %v", err)
	}
	env.captured["show -json"] = []byte("{not json")
	if err := MaskPlan(context.Background(), env, path); !errors.As(err, &o) || !strings.Contains(o.Msg, "could not be masked") {
		t.Errorf("unreadable sensitive values: %v", err)
	}
}

// Promise (spec, "A gated apply carries out the approved plan": it carries
// out exactly that file): the digest is checked again at the moment apply
// starts, so a plan file replaced after the earlier checks (between the
// mask step and the apply) is refused and no tool starts. On the control
// node ApplyPlan's check is the only one between the mask step and apply.
func TestApplyPlanRefusesAPlanFileReplacedAfterItWasChecked(t *testing.T) {
	env := newFakeEnv(t)
	path, err := WritePlan(env, []byte("plan bytes"))
	if err != nil {
		t.Fatal(err)
	}
	digest := seal.Digest([]byte("plan bytes"))
	if err := VerifyPlan(path, digest); err != nil {
		t.Fatalf("the released plan: %v", err)
	}
	if err := os.WriteFile(path, []byte("another plan"), 0o600); err != nil {
		t.Fatal(err)
	}
	var o *Outcome
	if _, err := ApplyPlan(context.Background(), env, path, digest); !errors.As(err, &o) || !strings.Contains(o.Msg, "nothing was applied") {
		t.Errorf("a replaced plan file: %v", err)
	}
	if len(env.tools) != 0 {
		t.Errorf("tools started for a replaced plan file: %v", env.tools)
	}
	if err := os.WriteFile(path, []byte("plan bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyPlan(context.Background(), env, path, digest); err != nil || len(env.tools) != 1 || env.tools[0] != "apply" {
		t.Errorf("the released plan file: %v, tools %v", err, env.tools)
	}
}
