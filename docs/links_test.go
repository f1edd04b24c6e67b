// Package docs holds the project's documentation pages; its test checks
// that every relative link between them leads somewhere.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pages are the Markdown files whose links are checked, relative to this
// directory: the repository's README and every page here.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "README.md")}, docs...)
}

var (
	fence      = regexp.MustCompile("(?ms)^ {0,3}(```|~~~).*?^ {0,3}(```|~~~)[^\\n]*$")
	codeSpan   = regexp.MustCompile("`[^`\\n]*(\\n[^`\\n]+)*`")
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	heading    = regexp.MustCompile(`(?m)^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	linkText   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// prose returns a page's text without its fenced code blocks, whose
// brackets and hashes are neither links nor headings.
func prose(text string) string {
	return fence.ReplaceAllString(text, "")
}

// slug turns a heading's text into its anchor as GitHub makes it: the
// rendered text lowercased, every character but letters, digits, marks,
// connector punctuation, hyphens and spaces dropped, spaces made hyphens.
func slug(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns every anchor a page defines: its headings' slugs, a
// repeated one numbered as GitHub numbers it (-1, -2, …), and explicit
// <a name> or <a id> targets.
func anchors(text string) map[string]bool {
	text = prose(text)
	got := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			got[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			got[s] = true
		}
		seen[s]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		got[m[1]] = true
	}
	return got
}

// brokenLinks returns a sentence for each relative link in the page at
// path whose file does not exist or whose #anchor names no heading of
// the page it leads to. Links with a scheme (https:, mailto:) are not
// followed.
func brokenLinks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	text := codeSpan.ReplaceAllString(prose(string(b)), "")
	var broken []string
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, ":") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		dest := path
		if file != "" {
			dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		destText, err := os.ReadFile(dest)
		if err != nil {
			if info, statErr := os.Stat(dest); statErr == nil && info.IsDir() && anchor == "" {
				continue
			}
			broken = append(broken, fmt.Sprintf("%s links to %s, which does not exist", path, target))
			continue
		}
		if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(string(destText))[anchor] {
			broken = append(broken, fmt.Sprintf("%s links to %s, but %s has no heading with the anchor #%s", path, target, dest, anchor))
		}
	}
	return broken, nil
}

// TestEveryRelativeLinkLeadsToAFileAndHeading guards the README and the
// pages here against a link or an #anchor that leads nowhere, as happens
// when a section moves or a heading is renamed.
func TestEveryRelativeLinkLeadsToAFileAndHeading(t *testing.T) {
	for _, p := range pages(t) {
		broken, err := brokenLinks(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range broken {
			t.Error(s)
		}
	}
}

// TestABrokenLinkOrAnchorIsFound checks the checker on a page of its own:
// a missing file and a missing heading are reported, a good link, an
// external one and links in code are not.
func TestABrokenLinkOrAnchorIsFound(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	other := filepath.Join(dir, "other.md")
	os.WriteFile(other, []byte("# Other\n\n## `plan_gate` policies\n\n## Twice\n\n## Twice\n"), 0o600)
	os.WriteFile(page, []byte(strings.Join([]string{
		"# Page",
		"[ok](other.md) [ok](other.md#plan_gate-policies) [ok](other.md#twice-1) [ok](#page)",
		"[ext](https://example.com/x#y) `[code](missing.md)`",
		"```", "[fenced](missing.md)", "```",
		"[gone](missing.md) [no heading](other.md#nothing) [no local](#nothing)",
	}, "\n")), 0o600)
	broken, err := brokenLinks(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) != 3 {
		t.Fatalf("want the 3 broken links found, got %d:\n%s", len(broken), strings.Join(broken, "\n"))
	}
	for i, want := range []string{"missing.md", "other.md#nothing", "#nothing"} {
		if !strings.Contains(broken[i], "links to "+want+",") {
			t.Errorf("finding %d is %q, want one naming %s", i, broken[i], want)
		}
	}
}

// TestSlugsAreGitHubs checks the anchors of headings shaped like this
// repository's: code spans, quotes, parentheses, punctuation.
func TestSlugsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"`plan_gate` policies":                                             "plan_gate-policies",
		"The configuration scan (what a plan runs)":                        "the-configuration-scan-what-a-plan-runs",
		"`credential \"NAME\"` (exactly one of `env`, `token`, `command`)": "credential-name-exactly-one-of-env-token-command",
		"The specification: \"OpenTofu runs\"":                             "the-specification-opentofu-runs",
		"Monitoring: the operator log and metrics":                         "monitoring-the-operator-log-and-metrics",
		"[Linked](x.md) heading":                                           "linked-heading",
		"A run's steps — and more":                                         "a-runs-steps--and-more",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
