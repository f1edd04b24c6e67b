// Package exec starts OpenTofu and Terraform for a run (DESIGN.md "exec"):
// it picks the engine and finds its binary, resolves the working directory
// inside the project checkout, encodes variables as TF_VAR_ values, builds
// the process environment and argument lists, and runs the process with its
// output streamed as it arrives, SIGINT on cancellation and the known
// stale-plan errors recognised.
//
// Terraform and OpenTofu are data (Engine), not a type hierarchy: the two
// take the same arguments and environment.
package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// Engine is the tool a run's template selects.
type Engine struct {
	Name   string // "opentofu" or "terraform", as a template's tool names it
	Binary string // "tofu" or "terraform", looked up on the PATH
}

// OpenTofu and Terraform are the two engines.
var (
	OpenTofu  = Engine{Name: "opentofu", Binary: "tofu"}
	Terraform = Engine{Name: "terraform", Binary: "terraform"}
)

// EngineFor returns the engine of a template's tool setting: "" and
// "opentofu" select OpenTofu, "terraform" selects Terraform. Any other value
// is an error naming the accepted values.
func EngineFor(tool string) (Engine, error) {
	switch tool {
	case "", "opentofu":
		return OpenTofu, nil
	case "terraform":
		return Terraform, nil
	}
	return Engine{}, fmt.Errorf("unknown tool %q: use \"opentofu\" (the default) or \"terraform\"", tool)
}

// Find looks the engine's binary up in pathEnv, the PATH value the run's
// process will get (spec "Requirements": the binary must be on the PATH of
// the process executing runs, the server or a worker). Empty and relative
// PATH entries are skipped, as os/exec does, so a checkout cannot supply the
// binary. It returns the absolute path of the first regular, executable file
// named Binary, or an error naming the tool, the binary, the PATH searched and
// what to do.
func (e Engine) Find(pathEnv string) (string, error) {
	if e.Binary == "" {
		return "", errors.New("finding the tool binary: engine has no binary name; use EngineFor")
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, e.Binary)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("tool %s needs the %q binary, which is not on the PATH of the process executing runs (PATH=%q): install it into one of those directories or add its directory to that PATH, then start the server again%s",
		e.Name, e.Binary, pathEnv, pinnedHint(e.Binary))
}

// pinnedHint names the pinned OpenTofu that `switchtender demo`, `switchtender
// tofu` and the tests build (tofubin.CachedPath) when binary is tofu and that
// build exists, so a user who ran the demo knows which directory to add;
// "" otherwise.
func pinnedHint(binary string) string {
	p := tofubin.CachedPath()
	if fi, err := os.Stat(p); binary != "tofu" || err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return fmt.Sprintf(" (the pinned OpenTofu the demo built is %s: add %s to that PATH)", p, filepath.Dir(p))
}
