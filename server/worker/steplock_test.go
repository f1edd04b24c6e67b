package worker

import (
	"os"
	"path/filepath"
	"testing"
)

// The worker says init can take no state lock only for a root module that
// declares no backend or cloud block, in any spelling of a configuration
// file, in a working directory whose last init recorded none; what it
// cannot read counts as a backend. The break it guards: a lost worker's
// init was said to hold no lock whatever backend the module used, though
// OpenTofu locks states at init while it sets up or migrates a backend.
func TestInitTakesNoLockOnlyWithoutABackend(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"no backend", map[string]string{"main.tf": "resource \"terraform_data\" \"x\" {}\nterraform {\n  required_version = \">= 1.6\"\n}\n"}, true},
		{"no configuration", map[string]string{}, true},
		{"a backend", map[string]string{"main.tf": "terraform {\n  backend \"s3\" {}\n}\n"}, false},
		{"a local backend", map[string]string{"main.tf": "terraform {\n  backend \"local\" {}\n}\n"}, false},
		{"a cloud block", map[string]string{"main.tf": "terraform {\n  cloud {}\n}\n"}, false},
		{"a backend in a .tofu file", map[string]string{"main.tf": "", "state.tofu": "terraform {\n  backend \"http\" {}\n}\n"}, false},
		{"a backend in an override file", map[string]string{"main.tf": "", "x_override.tf": "terraform {\n  backend \"pg\" {}\n}\n"}, false},
		{"a JSON configuration file", map[string]string{"main.tf.json": "{}"}, false},
		{"a JSON .tofu file", map[string]string{"main.tofu.json": "{}"}, false},
		{"a file that does not parse", map[string]string{"main.tf": "terraform {"}, false},
		{"a recorded backend", map[string]string{"main.tf": "", ".terraform/terraform.tfstate": `{"version":3,"backend":{"type":"s3","config":{}}}`}, false},
		{"a recorded null backend", map[string]string{"main.tf": "", ".terraform/terraform.tfstate": `{"version":3,"backend":null}`}, true},
		{"an unreadable record", map[string]string{"main.tf": "", ".terraform/terraform.tfstate": `{`}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range c.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := initTakesNoLock(dir); got != c.want {
				t.Errorf("initTakesNoLock = %v, want %v", got, c.want)
			}
		})
	}
	if initTakesNoLock(filepath.Join(t.TempDir(), "missing")) {
		t.Error("a working directory that cannot be read takes no lock")
	}
}
