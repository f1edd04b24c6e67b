package planview

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// everySection is testdata/changeset_every_section.json: a change in every
// risk section (a replace with its reason and forcing path, a delete, a
// forget, a forget then create), an update with a JSON diff, a line diff
// and a sensitive value changed and one unchanged, a create, a move and an
// output.
func everySection(t testing.TB) *ChangeSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "changeset_every_section.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return &cs
}

// golden compares got with testdata/name.golden, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (go test -update creates it): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update rewrites it)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// lineIndex is the index of the first of lines holding s, or -1.
func lineIndex(lines []string, s string) int {
	return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, s) })
}
