package vcs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository with one commit holding files, and returns
// its directory.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := osexec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestHeadCleanAndDirty(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"infra/main.tf": "# clean\n"})
	want := run(t, dir, "rev-parse", "HEAD")
	c, err := Head(ctx, filepath.Join(dir, "infra"))
	if err != nil || c.SHA != want || c.Dirty {
		t.Fatalf("Head of a clean tree = %+v, %v; want %s clean", c, err, want)
	}
	// An untracked file makes the tree dirty, as git status shows it.
	if err := os.WriteFile(filepath.Join(dir, "infra", "new.tf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Head(ctx, dir); err != nil || !c.Dirty || c.SHA != want {
		t.Fatalf("Head with an untracked file = %+v, %v; want dirty at %s", c, err, want)
	}
}

func TestHeadOutsideRepository(t *testing.T) {
	_, err := Head(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Head outside a repository: %v; want ErrNotRepository", err)
	}
	if IsRepository(context.Background(), t.TempDir()) {
		t.Fatal("IsRepository of a plain directory is true")
	}
}

func TestResolveBranchTagAndSHA(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"main.tf": "# one\n"})
	first := run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "tag", "v1")
	run(t, dir, "checkout", "-q", "-b", "feature")
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# two\n"), 0o644)
	run(t, dir, "commit", "-q", "-am", "two")
	second := run(t, dir, "rev-parse", "HEAD")
	for ref, want := range map[string]string{"main": first, "v1": first, "feature": second, first[:10]: first, second: second} {
		got, err := Resolve(ctx, dir, ref)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %s", ref, got, err, want)
		}
	}
}

// Hostile refs: an option, a ref that names nothing, a revision range, a
// control character.
func TestResolveRefusesHostileRefs(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"main.tf": "# one\n"})
	for _, ref := range []string{"", "--output=/tmp/x", "-h", "nosuch", "main..main", "ma in", "main\n", "HEAD:main.tf"} {
		if sha, err := Resolve(ctx, dir, ref); err == nil {
			t.Errorf("Resolve(%q) = %s; want a refusal", ref, sha)
		}
	}
}

func TestExportWritesTheCommitNotTheWorkingTree(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"infra/main.tf": "# committed\n", "infra/mod/m.tf": "# module\n"})
	sha := run(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "infra/main.tf"), []byte("# edited, not committed\n"), 0o644)
	os.Symlink("/etc", filepath.Join(dir, "infra", "link"))
	before := run(t, dir, "status", "--porcelain")
	dest := filepath.Join(t.TempDir(), "tree")
	if err := Export(ctx, dir, sha, dest); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dest, "infra/main.tf"))
	if err != nil || string(got) != "# committed\n" {
		t.Fatalf("exported main.tf = %q, %v; want the committed text", got, err)
	}
	if _, err := os.Stat(filepath.Join(dest, "infra/mod/m.tf")); err != nil {
		t.Fatalf("module file not exported: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "infra/link")); err == nil {
		t.Fatal("an untracked link of the working tree was exported")
	}
	if after := run(t, dir, "status", "--porcelain"); after != before {
		t.Fatalf("Export changed the checkout's status:\nbefore %q\nafter  %q", before, after)
	}
}

// A symbolic link committed to the tree is written as a link; nothing is
// written through it (git cannot hold both, but the stream is not trusted).
func TestWriteEntriesRefusesWritingThroughALink(t *testing.T) {
	outside := t.TempDir()
	stream := fmt.Sprintf("l1 blob %d\n%s\nf1 blob 2\nx\n\n", len(outside), outside)
	entries := []entry{{"120000", "l1", "a"}, {"100644", "f1", "a/x.tf"}}
	err := writeEntries(bufio.NewReader(strings.NewReader(stream)), entries, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("writing through a link: %v; want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.tf")); err == nil {
		t.Fatal("a file was written through the link")
	}
}

func TestParseTreeRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../x", "/abs", "a/../../x"} {
		if _, err := parseTree([]byte("100644 blob abc\t" + name + "\x00")); err == nil {
			t.Errorf("parseTree of %q succeeded", name)
		}
	}
}

// The commit's .gitattributes names a filter the checkout's git config
// defines: the export writes the blob as stored, and the filter never runs.
func TestExportRunsNoFilter(t *testing.T) {
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "ran")
	dir := repo(t, map[string]string{".gitattributes": "*.tf filter=evil\n", "main.tf": "# stored\n"})
	run(t, dir, "config", "filter.evil.smudge", "sh -c 'touch "+marker+"; cat'")
	run(t, dir, "config", "filter.evil.clean", "cat")
	sha := run(t, dir, "rev-parse", "HEAD")
	dest := t.TempDir()
	if err := Export(ctx, dir, sha, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the export ran the filter the commit's attributes name")
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "main.tf")); string(b) != "# stored\n" {
		t.Fatalf("main.tf = %q", b)
	}
}

// A directory the enclosing repository ignores (a demo's data beside the
// sources) is no repository of its own: no commit is recorded for it.
func TestIgnoredDirectoryIsNoRepository(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{".gitignore": "demo/\n", "main.tf": "# x\n"})
	ignored := filepath.Join(dir, "demo", "project")
	os.MkdirAll(ignored, 0o755)
	if IsRepository(ctx, ignored) {
		t.Fatal("an ignored directory counts as a repository")
	}
	if _, err := Head(ctx, ignored); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Head of an ignored directory: %v", err)
	}
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	if p, err := Prefix(ctx, sub); err != nil || p != "sub/" {
		t.Fatalf("Prefix = %q, %v", p, err)
	}
}
