package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash paths relative to the returned directory,
// to contents) into a new temporary directory.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// scanTree scans the root module at the top of root with no manifest.
func scanTree(t testing.TB, root string) *Result {
	t.Helper()
	return scanOpts(t, Options{Root: root, Dir: root})
}

func scanOpts(t testing.TB, opts Options) *Result {
	t.Helper()
	r, err := Module(opts)
	if err != nil {
		t.Fatalf("Module: %v", err)
	}
	return r
}

// brief renders findings as "address|file|line" lines.
func brief(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s|%s|%d\n", f.Address, f.File, f.Line)
	}
	return b.String()
}

// wantFindings checks the findings' addresses, files and lines (want: one
// "address|file|line" per line), and that the reasons contain reasons in
// order.
func wantFindings(t *testing.T, r *Result, want string, reasons ...string) {
	t.Helper()
	want = strings.TrimSpace(want)
	if want != "" {
		want += "\n"
	}
	if got := brief(r.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s\nreasons:\n%s", got, want, allReasons(r.Findings))
	}
	for i, sub := range reasons {
		if i >= len(r.Findings) || !strings.Contains(r.Findings[i].Reason, sub) {
			t.Errorf("finding %d's reason does not contain %q:\n%s", i, sub, allReasons(r.Findings))
		}
	}
}

func allReasons(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s: %s\n", f.Address, f.Reason)
	}
	return b.String()
}
