package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workerFiles makes the files a worker block names, in dir.
func workerFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"id_ed25519", "known_hosts", "pool.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "infra"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

const goodWorker = `
worker {
  name              = "w1"
  control           = "127.0.0.1:2222"
  pool              = "eu"
  key               = "id_ed25519"
  delivery_identity = "pool.key"
  known_hosts       = "known_hosts"
  data_dir          = "data"
}
project "infra" { path = "infra" }
`

func TestWorkerConfigParses(t *testing.T) {
	dir := workerFiles(t)
	w, err := ParseWorker([]byte(goodWorker), "worker.hcl", dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "w1" || w.Control != "127.0.0.1:2222" || w.Pool != "eu" || w.Key != filepath.Join(dir, "id_ed25519") ||
		w.DataDir != filepath.Join(dir, "data") || w.Projects["infra"] == nil || w.Projects["infra"].Path != filepath.Join(dir, "infra") {
		t.Errorf("parsed %+v", w)
	}
}

// Each mistake is named with its file:line and what to do.
func TestWorkerConfigErrors(t *testing.T) {
	dir := workerFiles(t)
	cases := []struct{ src, want string }{
		{`project "infra" { path = "infra" }`, "no worker block"},
		{strings.Replace(goodWorker, `"127.0.0.1:2222"`, `"nohost"`, 1), `worker.hcl:4,23: Invalid control address; control = "nohost" is not HOST:PORT`},
		{strings.Replace(goodWorker, `"id_ed25519"`, `"missing"`, 1), "key " + filepath.Join(dir, "missing") + " does not exist"},
		{strings.Replace(goodWorker, `  pool              = "eu"`, ``, 1), `Missing required argument; The argument "pool" is required`},
		{strings.Replace(goodWorker, `project "infra" { path = "infra" }`, ``, 1), "add a project"},
		{strings.Replace(goodWorker, `project "infra" { path = "infra" }`, `project "infra" { path = "nope" }`, 1), "Project path not found"},
		{goodWorker + "\nworker {}\n", "Duplicate worker block"},
		{strings.Replace(goodWorker, `data_dir`, `datadir`, 1), "a worker block takes"},
	}
	for _, c := range cases {
		_, err := ParseWorker([]byte(c.src), "worker.hcl", dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config:\n%s\nerror %v, want it to contain %q", c.src, err, c.want)
		}
	}
}
