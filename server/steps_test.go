package server

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/exec"
)

// fakeTool stands in for tofu on failure paths a real binary cannot make:
// each call goes to fn with the first argument (init, plan, show, state,
// apply) and the invocation.
type fakeTool struct {
	mu    sync.Mutex
	calls []string
	fn    func(ctx context.Context, step string, inv exec.Invocation) ([]byte, exec.Result, error)
}

func (f *fakeTool) call(ctx context.Context, inv exec.Invocation) ([]byte, exec.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, inv.Args[0])
	f.mu.Unlock()
	return f.fn(ctx, inv.Args[0], inv)
}

func (f *fakeTool) Run(ctx context.Context, inv exec.Invocation) (exec.Result, error) {
	_, res, err := f.call(ctx, inv)
	return res, err
}

func (f *fakeTool) Capture(ctx context.Context, inv exec.Invocation) ([]byte, exec.Result, error) {
	return f.call(ctx, inv)
}

func (f *fakeTool) called() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, " ")
}

var _ toolRunner = (*fakeTool)(nil)

// fakePlanJSON is the smallest show -json the gate reads: nothing changes.
const fakePlanJSON = `{"format_version":"1.2","resource_changes":[]}`

// writeFakePlan writes a saved plan as OpenTofu's zip with a prior state of
// lineage L and serial 1, to the path a plan's -out= names.
func writeFakePlan(inv exec.Invocation) error {
	var out string
	for _, a := range inv.Args {
		if p, ok := strings.CutPrefix(a, "-out="); ok {
			out = p
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	w, err := zw.Create("tfstate")
	if err != nil {
		return err
	}
	io.WriteString(w, `{"lineage":"L","serial":1}`)
	if err := writeFakeSnapshot(zw, inv.Dir); err != nil {
		return err
	}
	return zw.Close()
}

// writeFakeSnapshot writes the configuration snapshot OpenTofu embeds in a
// saved plan: the root module's configuration files of dir, as
// tfconfig/m-/NAME, and its manifest.
func writeFakeSnapshot(zw *zip.Writer, dir string) error {
	w, err := zw.Create("tfconfig/modules.json")
	if err != nil {
		return err
	}
	io.WriteString(w, `[{"Key":"","Source":"","Dir":"."}]`)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !(strings.HasSuffix(n, ".tf") || strings.HasSuffix(n, ".tofu") || strings.HasSuffix(n, ".tf.json") || strings.HasSuffix(n, ".tofu.json")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		w, err := zw.Create("tfconfig/m-/" + n)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
}

// gatedFake answers like tofu for a gated apply that no rule holds; steps in
// override name what differs.
func gatedFake(override map[string]func(ctx context.Context, inv exec.Invocation) ([]byte, exec.Result, error)) *fakeTool {
	return &fakeTool{fn: func(ctx context.Context, step string, inv exec.Invocation) ([]byte, exec.Result, error) {
		if f, ok := override[step]; ok {
			return f(ctx, inv)
		}
		switch step {
		case "plan":
			return nil, exec.Result{}, writeFakePlan(inv)
		case "show":
			return []byte(fakePlanJSON), exec.Result{}, nil
		case "state":
			return []byte(`{"lineage":"L","serial":1}`), exec.Result{}, nil
		}
		return nil, exec.Result{}, nil
	}}
}

const passingRule = `
rule "few" {
  templates   = ["data"]
  max_destroy = 5
}
`

// runFake launches template data as alice with the fake tool and waits for
// one of statuses.
func runFake(t *testing.T, f *fakeTool, extra string, statuses ...Status) (*harness, string) {
	t.Helper()
	h := newHarness(t, dataTemplates+extra)
	h.srv.runner = f
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", statuses...)
	r, _ := h.srv.db.GetRun("1")
	return h, r.Message
}

func TestStepFailuresEndTheRun(t *testing.T) {
	boom := errors.New("exec format error")
	cases := []struct {
		name, step string
		res        exec.Result
		err        error
		want       Status
		msg, calls string
	}{
		{"init exits 1", "init", exec.Result{ExitCode: 1}, nil, StatusFailed, "init failed with exit code 1", "init"},
		{"plan cannot start", "plan", exec.Result{ExitCode: -1}, boom, StatusFailed, "plan could not run: exec format error", "init plan"},
		{"show exits 1", "show", exec.Result{ExitCode: 1}, nil, StatusFailed, "show -json failed with exit code 1", "init plan show"},
		{"state pull exits 1", "state", exec.Result{ExitCode: 1}, nil, StatusFailed, "Refused to apply: reading the current state failed", "init plan show state"},
		{"apply says stale", "apply", exec.Result{ExitCode: 1, Stale: true}, nil, StatusStale, "The saved plan is stale", "init plan show state show apply"},
		{"apply exits 1", "apply", exec.Result{ExitCode: 1}, nil, StatusFailed, "apply failed with exit code 1", "init plan show state show apply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := gatedFake(map[string]func(context.Context, exec.Invocation) ([]byte, exec.Result, error){
				c.step: func(context.Context, exec.Invocation) ([]byte, exec.Result, error) { return nil, c.res, c.err },
			})
			h, msg := runFake(t, f, passingRule, c.want)
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q lacks %q", msg, c.msg)
			}
			if got := f.called(); got != c.calls {
				t.Errorf("tool calls %q, want %q", got, c.calls)
			}
			if _, err := h.srv.db.GetBlob(blobPlan, "1"); err == nil {
				t.Error("the sealed plan outlived the run")
			}
			if _, err := os.Stat(filepath.Join(h.dir, "data", "runs", "1", planFileName)); err == nil {
				t.Error("the plaintext plan outlived the run")
			}
		})
	}
}

// A saved plan the gate cannot read is held (the gate fails closed).
func TestUnreadablePlanIsHeld(t *testing.T) {
	f := gatedFake(map[string]func(context.Context, exec.Invocation) ([]byte, exec.Result, error){
		"show": func(context.Context, exec.Invocation) ([]byte, exec.Result, error) {
			return []byte(`{"format_version":"9.0"}`), exec.Result{}, nil
		},
	})
	h, msg := runFake(t, f, passingRule, StatusAwaitingApproval, StatusFailed, StatusSucceeded)
	r, _ := h.srv.db.GetRun("1")
	if r.Status != StatusAwaitingApproval || !strings.Contains(msg, "Held for approval") {
		t.Fatalf("run is %s: %s", r.Status, msg)
	}
}

// The working directory is checked again before each step: one swapped for
// a symlink between two steps stops the run before the next step starts.
func TestARunStopsWhenItsWorkingDirectoryIsSwappedBetweenSteps(t *testing.T) {
	outside := t.TempDir()
	var h *harness
	f := gatedFake(map[string]func(context.Context, exec.Invocation) ([]byte, exec.Result, error){
		"init": func(ctx context.Context, inv exec.Invocation) ([]byte, exec.Result, error) {
			wd := filepath.Join(h.project, "infra", "data")
			if err := os.Rename(wd, wd+".moved"); err != nil {
				return nil, exec.Result{}, err
			}
			return nil, exec.Result{}, os.Symlink(outside, wd)
		},
	})
	h = newHarness(t, dataTemplates+passingRule)
	h.srv.runner = f
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusFailed)
	r, _ := h.srv.db.GetRun("1")
	if !strings.Contains(r.Message, "before state secrets") || !strings.Contains(r.Message, "nothing more ran") {
		t.Errorf("message = %q", r.Message)
	}
	if got := f.called(); got != "init" {
		t.Errorf("tool calls after the swap: %q", got)
	}
}

// A held apply whose working directory is replaced while it waits — by a
// copy at the same path, or by a symlink to outside the checkout — fails
// after its approval, and no tool process runs.
func TestAHeldApplyWhoseWorkingDirectoryIsSwappedRunsNoTool(t *testing.T) {
	for _, swap := range []string{"copy", "symlink"} {
		t.Run(swap, func(t *testing.T) {
			h := newHarness(t, dataTemplates+approveAllData)
			h.mustSSH("alice", "launch", "data", "--wait")
			r, _ := h.srv.db.GetRun("1")
			wd := filepath.Join(h.project, "infra", "data")
			if err := os.Rename(wd, wd+".moved"); err != nil {
				t.Fatal(err)
			}
			if swap == "copy" {
				if err := os.CopyFS(wd, os.DirFS(wd+".moved")); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(t.TempDir(), wd); err != nil {
				t.Fatal(err)
			}
			f := gatedFake(nil)
			h.srv.runner = f
			h.mustSSH("bob", "approve", "1", "--digest", r.Proposal.Digest)
			h.waitStatus("1", StatusFailed)
			r, _ = h.srv.db.GetRun("1")
			if !strings.Contains(r.Message, "nothing more ran") {
				t.Errorf("message = %q", r.Message)
			}
			if got := f.called(); got != "" {
				t.Errorf("tool calls after the swap: %q", got)
			}
		})
	}
}
