package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// tofuDir writes a configuration with a terraform_data resource (built in,
// no provider download) into checkout/infra/app and returns the resolved
// working directory.
func tofuDir(t *testing.T) string {
	t.Helper()
	checkout := t.TempDir()
	app := filepath.Join(checkout, "infra", "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	const cfg = `
variable "release" { type = string }
variable "token" {
  type      = string
  sensitive = true
}
resource "terraform_data" "app" {
  input = { release = var.release, token = var.token }
}
output "release" { value = terraform_data.app.output.release }
`
	if err := os.WriteFile(filepath.Join(app, "main.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := ResolveWorkingDir(checkout, "infra/app")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

type tofuRun struct {
	t   *testing.T
	dir string
	log bytes.Buffer
}

func (r *tofuRun) inv(release string, args []string) Invocation {
	env := BuildEnv(EnvSpec{
		Base: os.Environ(),
		Vars: map[string]string{"release": release, "token": "s3cr3t-token-value"},
	})
	return Invocation{Binary: tofuBin, Dir: r.dir, Env: env, Args: args, Output: &r.log}
}

func (r *tofuRun) run(release string, args []string, wantExit int) Result {
	r.t.Helper()
	res, err := Run(context.Background(), r.inv(release, args))
	if err != nil || res.ExitCode != wantExit {
		r.t.Fatalf("tofu %s: %+v, %v (want exit %d)\n%s", strings.Join(args, " "), res, err, wantExit, r.log.String())
	}
	return res
}

// TestTofuInitPlanShowApply runs the gated-apply steps with the real
// OpenTofu: init, plan -out, show -json (captured), apply of the saved plan.
func TestTofuInitPlanShowApply(t *testing.T) {
	r := &tofuRun{t: t, dir: tofuDir(t)}
	planFile := filepath.Join(t.TempDir(), "plan")

	r.run("v1", InitArgs(true), 0)
	r.run("v1", PlanArgs(planFile), 0)
	if !strings.Contains(r.log.String(), "Plan: 1 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("plan output:\n%s", r.log.String())
	}
	if _, err := os.Stat(planFile); err != nil {
		t.Fatalf("plan -out wrote no plan file: %v", err)
	}

	logBefore := r.log.Len()
	stdout, res, err := Capture(context.Background(), r.inv("v1", ShowJSONArgs(planFile)))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("tofu show -json: %+v, %v\n%s", res, err, r.log.String())
	}
	if r.log.Len() != logBefore {
		t.Fatalf("show -json wrote to the log: %q", r.log.String()[logBefore:])
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(stdout, &plan); err != nil {
		t.Fatalf("reading show -json: %v", err)
	}
	if len(plan.ResourceChanges) != 1 || plan.ResourceChanges[0].Address != "terraform_data.app" ||
		!plan.ResourceChanges[0].Change.Actions.Create() {
		t.Fatalf("plan JSON resource changes: %+v", plan.ResourceChanges)
	}
	if !bytes.Contains(stdout, []byte("s3cr3t-token-value")) {
		t.Fatal("show -json does not hold the sensitive value (this test expects it to, and Capture to keep it out of the log)")
	}

	r.run("v1", ApplyPlanArgs(planFile), 0)
	out := r.log.String()
	if !strings.Contains(out, "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.") {
		t.Fatalf("apply output:\n%s", out)
	}
	if strings.Contains(out, "s3cr3t-token-value") {
		t.Fatal("the sensitive value reached the log")
	}
	// BuildEnv dropped this machine's dangling TF_CLI_CONFIG_FILE, so tofu did not warn.
	if strings.Contains(out, "CLI configuration") {
		t.Fatalf("tofu warned about its CLI configuration:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "terraform.tfstate")); err != nil {
		t.Fatalf("no state in the working directory: %v", err)
	}
}

// TestTofuStalePlan: a plan saved, then the state changed by a separate
// apply, then the saved plan applied: OpenTofu refuses it and Result.Stale
// says so.
func TestTofuStalePlan(t *testing.T) {
	r := &tofuRun{t: t, dir: tofuDir(t)}
	planFile := filepath.Join(t.TempDir(), "plan")
	r.run("v1", InitArgs(true), 0)
	r.run("v1", ApplyAutoArgs(), 0) // state exists, so the plan below is compared with it
	if res := r.run("v2", PlanArgs(planFile), 0); res.Stale {
		t.Fatal("a fresh plan reported stale")
	}
	r.run("v3", ApplyAutoArgs(), 0) // someone else changes the state

	res, err := Run(context.Background(), r.inv("v2", ApplyPlanArgs(planFile)))
	if err != nil {
		t.Fatalf("apply of the stale plan: %v", err)
	}
	if !res.Stale || res.ExitCode == 0 {
		t.Fatalf("Result = %+v, want Stale and a non-zero exit\n%s", res, r.log.String())
	}
	state, err := os.ReadFile(filepath.Join(r.dir, "terraform.tfstate"))
	if err != nil || !bytes.Contains(state, []byte(`"v3"`)) || bytes.Contains(state, []byte(`"v2"`)) {
		t.Fatalf("the refused apply changed the state:\n%s", state)
	}
}

// TestTofuCancelReleasesLock cancels a real tofu apply and checks the state
// is not left locked: the next apply succeeds.
func TestTofuCancelReleasesLock(t *testing.T) {
	r := &tofuRun{t: t, dir: tofuDir(t)}
	const cfg = `
resource "terraform_data" "slow" {
  provisioner "local-exec" { command = "echo started; sleep 30" }
}
`
	if err := os.WriteFile(filepath.Join(r.dir, "slow.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r.run("v1", InitArgs(true), 0)
	out := newSyncBuffer("started")
	inv := r.inv("v1", ApplyAutoArgs())
	inv.Output = out
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var res Result
	go func() {
		var err error
		res, err = Run(ctx, inv)
		done <- err
	}()
	waitSeen(t, out)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled apply returned no error")
	}
	if res.ExitCode <= 0 { // -1 would mean SIGKILL: tofu must stop on SIGINT by itself
		t.Fatalf("cancelled apply: %+v, want tofu's own non-zero exit\n%s", res, out.String())
	}
	t.Logf("cancelled apply: %+v\n%s", res, out.String())
	if !strings.Contains(out.String(), "Interrupt received") {
		t.Fatalf("tofu did not receive SIGINT:\n%s", out.String())
	}
	os.Remove(filepath.Join(r.dir, "slow.tf"))
	r.run("v1", ApplyAutoArgs(), 0) // would fail with "Error acquiring the state lock" if it were left locked
}
