package gate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// pinnedTofu is where the project's pinned OpenTofu is built (see the
// preamble); a tofu on PATH is used when it is not there.
const pinnedTofu = "/root/.cache/switchtender/tofu/v1.12.6/tofu"

func tofuBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SWITCHTENDER_TOFU"); p != "" {
		return p
	}
	if _, err := os.Stat(pinnedTofu); err == nil {
		return pinnedTofu
	}
	if p, err := exec.LookPath("tofu"); err == nil {
		return p
	}
	t.Fatalf("no tofu binary: build OpenTofu v1.12.6 into %s, put tofu on PATH, or set SWITCHTENDER_TOFU", pinnedTofu)
	return ""
}

// tofuEnv is the environment tofu runs with in tests: the machine's
// TF_CLI_CONFIG_FILE (pointing at a missing file) removed, no checkpoint.
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

func runTofu(bin, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = tofuEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tofu %s in %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, err, out, stderr.String())
	}
	return out, nil
}

// The configuration the real plans are made from. r has var.n instances
// replaced when var.t changes; protected has var.p instances; s and the
// output carry the sensitive variable.
const realConfig = `
variable "n" {
  type    = number
  default = 3
}
variable "p" {
  type    = number
  default = 1
}
variable "t" {
  type    = string
  default = "a"
}
variable "secret" {
  type      = string
  sensitive = true
}
variable "cfg" {
  type      = map(string)
  sensitive = true
  default   = { region = "eu-hidden-1" }
}
variable "public" {
  type    = string
  default = "plainly-visible"
}

resource "terraform_data" "r" {
  count            = var.n
  input            = "r${count.index}-${var.public}"
  triggers_replace = var.t
}

resource "terraform_data" "protected" {
  count = var.p
  input = "p${count.index}"
}

resource "terraform_data" "s" {
  input = var.secret
}

output "token" {
  value     = "tok-${var.secret}"
  sensitive = true
}

output "public" {
  value = var.public
}
`

// realPlanSet holds `tofu show -json` of saved plans made by the real tofu
// from one applied state (n=3, p=1, t=a, secret=s3cret-value).
type realPlanSet struct {
	shrink   []byte // n = 1: deletes r[1], r[2]
	replace  []byte // t = b: replaces r[0..2]
	protect  []byte // p = 0: deletes protected[0]
	forget   []byte // protected removed with lifecycle { destroy = false }
	noChange []byte // same variables as applied
	err      error
}

var (
	realOnce  sync.Once
	realPlans realPlanSet
	realDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if realDir != "" {
		os.RemoveAll(realDir)
	}
	os.Exit(code)
}

// plans returns the real plans, making them on first use (about ten tofu
// commands).
func plans(t testing.TB) *realPlanSet {
	t.Helper()
	bin := tofuBinary(t)
	realOnce.Do(func() {
		realPlans.err = makeRealPlans(bin)
	})
	if realPlans.err != nil {
		t.Fatalf("making real plans: %v", realPlans.err)
	}
	return &realPlans
}

func makeRealPlans(bin string) error {
	dir, err := os.MkdirTemp("", "gate-tofu-")
	if err != nil {
		return err
	}
	realDir = dir
	write := func(text string) error {
		return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(text), 0o600)
	}
	const secret = "-var=secret=s3cret-value"
	plan := func(name string, vars ...string) ([]byte, error) {
		args := append([]string{"plan", "-input=false", "-no-color", "-out=" + name + ".tfplan", secret}, vars...)
		if _, err := runTofu(bin, dir, args...); err != nil {
			return nil, err
		}
		return runTofu(bin, dir, "show", "-json", "-no-color", name+".tfplan")
	}
	if err := write(realConfig); err != nil {
		return err
	}
	if _, err := runTofu(bin, dir, "init", "-input=false", "-no-color"); err != nil {
		return err
	}
	if _, err := runTofu(bin, dir, "apply", "-auto-approve", "-input=false", "-no-color", secret); err != nil {
		return err
	}
	for _, p := range []struct {
		dst  *[]byte
		name string
		vars []string
	}{
		{&realPlans.shrink, "shrink", []string{"-var=n=1"}},
		{&realPlans.replace, "replace", []string{"-var=t=b"}},
		{&realPlans.protect, "protect", []string{"-var=p=0"}},
		{&realPlans.noChange, "nochange", nil},
	} {
		if *p.dst, err = plan(p.name, p.vars...); err != nil {
			return err
		}
	}
	// Forget: the protected resource leaves the configuration through a
	// removed block that keeps the object.
	cfg := strings.Replace(realConfig, `resource "terraform_data" "protected" {
  count = var.p
  input = "p${count.index}"
}`, `removed {
  from = terraform_data.protected
  lifecycle {
    destroy = false
  }
}`, 1)
	if cfg == realConfig {
		return fmt.Errorf("forget configuration not derived")
	}
	if err := write(cfg); err != nil {
		return err
	}
	realPlans.forget, err = plan("forget")
	return err
}
