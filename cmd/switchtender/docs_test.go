package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's top directory, from this package's.
const repoRoot = "../.."

// The README and docs/ are self-contained: every link is relative, stays
// inside the repository and names a file that exists; no Go or Markdown
// file names a path outside the repository (the machine's shared folders).
func TestDocsStayInsideTheRepository(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)]+)\)`)
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	for _, doc := range append(docs, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := strings.SplitN(m[1], "#", 2)[0]
			if strings.Contains(m[1], "://") || filepath.IsAbs(target) {
				t.Errorf("%s links outside the repository: %s", doc, m[1])
				continue
			}
			if target == "" {
				continue
			}
			full := filepath.Join(filepath.Dir(doc), target)
			if rel, err := filepath.Rel(repoRoot, full); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links outside the repository: %s", doc, m[1])
			} else if _, err := os.Stat(full); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, m[1])
			}
		}
	}
	outside := regexp.MustCompile(`/wo` + `rk/|\.\./sha` + `red`)
	filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != repoRoot {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(p); ext != ".go" && ext != ".md" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && outside.Match(b) {
			t.Errorf("%s names a path outside the repository: %s", p, outside.Find(b))
		}
		return nil
	})
}
