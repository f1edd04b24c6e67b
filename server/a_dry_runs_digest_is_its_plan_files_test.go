package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/seal"
)

// dryRunFake is gatedFake whose plan keeps a copy of the plan file it
// wrote (the run wipes the file itself), with show answering showJSON.
func dryRunFake(showJSON string) (*fakeTool, func() []byte) {
	var mu sync.Mutex
	var written []byte
	f := gatedFake(map[string]func(context.Context, exec.Invocation) ([]byte, exec.Result, error){
		"plan": func(_ context.Context, inv exec.Invocation) ([]byte, exec.Result, error) {
			if err := writeFakePlan(inv); err != nil {
				return nil, exec.Result{}, err
			}
			var out string
			for _, a := range inv.Args {
				if p, ok := strings.CutPrefix(a, "-out="); ok {
					out = p
				}
			}
			b, err := os.ReadFile(out)
			mu.Lock()
			written = b
			mu.Unlock()
			return nil, exec.Result{}, err
		},
		"show": func(context.Context, exec.Invocation) ([]byte, exec.Result, error) {
			return []byte(showJSON), exec.Result{}, nil
		},
	})
	return f, func() []byte { mu.Lock(); defer mu.Unlock(); return written }
}

// A dry run records the digest of the very plan file it saved (which is
// wiped, never stored) and its change set sealed to that digest; the
// rendering is read once, by show -json, after the plan.
func TestADryRunsDigestIsItsPlanFiles(t *testing.T) {
	t.Parallel()
	f, written := dryRunFake(`{"format_version":"1.2","resource_changes":[{"address":"terraform_data.a","mode":"managed","type":"terraform_data","name":"a","change":{"actions":["create"],"before":null,"after":{"input":"x"},"after_unknown":{}}}]}`)
	h := newHarness(t, dataTemplates)
	h.srv.runner = f
	h.mustSSH("carol", "launch", "data", "--dry-run")
	h.waitStatus("1", StatusSucceeded, StatusFailed)
	r, _ := h.srv.db.GetRun("1")
	if r.Status != StatusSucceeded || r.DryPlan == nil {
		t.Fatalf("the dry run %s (%s) recorded %+v", r.Status, r.Message, r.DryPlan)
	}
	if plan := written(); len(plan) == 0 || r.DryPlan.Digest != seal.Digest(plan) {
		t.Errorf("the dry run's digest %s is not its plan file's (%d bytes)", r.DryPlan.Digest, len(plan))
	}
	if r.DryPlan.Add != 1 || r.DryPlan.Destroy != 0 {
		t.Errorf("the dry run's counts: %+v", r.DryPlan)
	}
	if got := f.called(); !strings.HasSuffix(got, "plan show") {
		t.Errorf("tool calls %q, want the plan and then its show -json", got)
	}
	cs, err := h.srv.Changes("1")
	if err != nil || cs == nil || len(cs.Resources) != 1 || cs.Resources[0].Address != "terraform_data.a" {
		t.Fatalf("the dry run's change set: %+v, %v", cs, err)
	}
	if _, err := h.srv.db.GetBlob(blobPlan, "1"); err == nil {
		t.Error("the dry run's plan was stored")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "data", "runs", "1", planFileName)); err == nil {
		t.Error("the dry run's plan file outlived the run")
	}
	if !strings.Contains(r.Message, "1 to add") || !strings.Contains(r.Message, "`show 1 --changes`") {
		t.Errorf("the dry run's message: %q", r.Message)
	}
}

// A dry run whose rendering the gate cannot read still succeeds (its plan
// did), records no digest or change set, and says so.
func TestADryRunWhosePlanCannotBeMeasuredRecordsNoDigest(t *testing.T) {
	t.Parallel()
	f, _ := dryRunFake(`{"format_version":"9.0"}`)
	h := newHarness(t, dataTemplates)
	h.srv.runner = f
	h.mustSSH("carol", "launch", "data", "--dry-run")
	h.waitStatus("1", StatusSucceeded, StatusFailed)
	r, _ := h.srv.db.GetRun("1")
	if r.Status != StatusSucceeded || r.DryPlan != nil || !strings.Contains(r.Message, "could not be measured") {
		t.Fatalf("the dry run %s (%s) recorded %+v", r.Status, r.Message, r.DryPlan)
	}
	if cs, err := h.srv.Changes("1"); cs != nil || err != nil {
		t.Errorf("a change set without a digest: %v, %v", cs, err)
	}
}

// A dry run whose show -json fails fails with its exit code, as a gated
// plan's does.
func TestADryRunWhoseShowFailsFails(t *testing.T) {
	t.Parallel()
	f := gatedFake(map[string]func(context.Context, exec.Invocation) ([]byte, exec.Result, error){
		"show": func(context.Context, exec.Invocation) ([]byte, exec.Result, error) {
			return nil, exec.Result{ExitCode: 1}, nil
		},
	})
	h := newHarness(t, dataTemplates)
	h.srv.runner = f
	h.mustSSH("carol", "launch", "data", "--dry-run")
	h.waitStatus("1", StatusSucceeded, StatusFailed)
	r, _ := h.srv.db.GetRun("1")
	if r.Status != StatusFailed || !strings.Contains(r.Message, "show -json failed with exit code 1") || r.DryPlan != nil {
		t.Fatalf("the dry run %s (%s) recorded %+v", r.Status, r.Message, r.DryPlan)
	}
}
