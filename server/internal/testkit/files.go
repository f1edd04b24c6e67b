package testkit

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// WriteFiles writes files (name -> text; "" removes it, "symlink:T"
// makes a symbolic link to T) into dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if text == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(text, "symlink:"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// GitCommitAll makes dir a git repository with one commit of everything in
// it and returns the commit.
func GitCommitAll(t testing.TB, dir string) string {
	t.Helper()
	var out []byte
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "worker checkout"}, {"rev-parse", "HEAD"}} {
		b, err := osexec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		out = b
	}
	return strings.TrimSpace(string(out))
}

// WriteSlowModule makes infra/slow in checkout a 30-second apply.
func WriteSlowModule(t testing.TB, checkout string) {
	t.Helper()
	tf := "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" { command = \"echo started-slow; sleep 30\" }\n}\n"
	if err := os.WriteFile(filepath.Join(checkout, "infra/slow/main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteBlobModule writes infra/blob13f into checkout: a working directory
// whose saved plan holds about size bytes of incompressible input (the
// plan file is deflated: base64 text of random bytes shrinks back to about
// the bytes' size).
func WriteBlobModule(t testing.TB, checkout string, size int) {
	t.Helper()
	b := make([]byte, size)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	WriteFiles(t, filepath.Join(checkout, "infra/blob13f"), map[string]string{
		"main.tf":  "resource \"terraform_data\" \"blob\" {\n  input = file(\"${path.module}/blob.txt\")\n}\n",
		"blob.txt": base64.StdEncoding.EncodeToString(b),
	})
}

// RawEvidence is a scan's evidence as a raw worker sends it.
func RawEvidence(findings ...store.Finding) *store.Scan {
	return &store.Scan{Digest: "sha256:" + strings.Repeat("1", 64), Modules: 1, Files: 1, Findings: findings}
}

// PolicyFile writes a plan_gate policy into a temporary file and
// returns its path.
func PolicyFile(t testing.TB, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.rego")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// GitIn runs git in dir and returns its trimmed output.
func GitIn(t testing.TB, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := osexec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// WriteFile writes text to path, failing t on an error.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
