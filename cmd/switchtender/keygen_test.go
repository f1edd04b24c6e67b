package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/seal"
)

// keygen pool writes the identity mode 0600, prints only its recipient, and
// never overwrites a file.
func TestKeygenPool(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pool.key")
	var stdout bytes.Buffer
	if err := cmdKeygen([]string{"pool", "--out", out}, &stdout); err != nil {
		t.Fatal(err)
	}
	k, err := seal.LoadKey(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(stdout.String()); got != k.Recipient() || !strings.HasPrefix(got, "age1") {
		t.Errorf("printed %q, want the recipient %s", got, k.Recipient())
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := cmdKeygen([]string{"pool", "--out", out}, &stdout); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Errorf("second keygen over the same file: %v", err)
	}
	if err := cmdKeygen([]string{"pool"}, &stdout); err == nil || !strings.Contains(err.Error(), "--out FILE") {
		t.Errorf("keygen pool without --out: %v", err)
	}
}
