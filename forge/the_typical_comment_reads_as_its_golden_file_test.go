package forge

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files: go test ./forge -run Golden -update.
var update = flag.Bool("update", false, "rewrite forge/testdata/comment_*.md")

// TestTheTypicalCommentReadsAsItsGoldenFile compares the comment of a
// merged pull request with a plan of each kind, superseded heads, three
// applies and a note with testdata/comment_typical.md.
func TestTheTypicalCommentReadsAsItsGoldenFile(t *testing.T) {
	got := RenderComment(typicalReport(t), CommentLimit)
	path := filepath.Join("testdata", "comment_typical.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./forge -run Golden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the comment differs from %s (go test ./forge -run Golden -update rewrites it):\n%s", path, got)
	}
}
