package worker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// initTakesNoLock reports whether `tofu init` in dir can take no state
// lock, for the start of init the worker reports (a worker lost during it
// is then said to have held none). OpenTofu 1.12 locks states at init only
// while it sets up or changes the working directory's backend
// (command/meta_backend.go: a backend configured for the first time;
// meta_backend_migrate.go: state migrated between backends, locked before
// the -input=false refusal), so only a root module that declares no
// backend or cloud block, in a working directory whose .terraform records
// none, takes none. Anything it cannot read, and any JSON configuration
// file, counts as declaring one.
func initTakesNoLock(dir string) bool {
	if recordsBackend(dir) {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(name, ".tf.json") || strings.HasSuffix(name, ".tofu.json"):
			return false
		case strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tofu"):
			if declaresBackend(filepath.Join(dir, name)) {
				return false
			}
		}
	}
	return true
}

// recordsBackend reports whether dir's .terraform/terraform.tfstate (the
// backend the last init set up) names a backend, or cannot be read.
func recordsBackend(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	var st struct {
		Backend json.RawMessage `json:"backend"`
	}
	if err != nil || json.Unmarshal(b, &st) != nil {
		return true
	}
	return len(st.Backend) > 0 && string(st.Backend) != "null"
}

// declaresBackend reports whether the configuration file at path has a
// terraform block with a backend or cloud block, or cannot be parsed.
func declaresBackend(path string) bool {
	src, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	f, diags := hclsyntax.ParseConfig(src, filepath.Base(path), hcl.InitialPos)
	if diags.HasErrors() {
		return true
	}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "terraform" {
			continue
		}
		for _, inner := range b.Body.Blocks {
			if inner.Type == "backend" || inner.Type == "cloud" {
				return true
			}
		}
	}
	return false
}
