package server

import (
	"fmt"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
)

// forgeProjectConfig is a forge block and a project naming it whose
// checkout is a new git repository with origin remote ("" for none).
func forgeProjectConfig(t *testing.T, remote string) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "--quiet"}, {"remote", "add", "origin", remote}} {
		if args[0] == "remote" && remote == "" {
			continue
		}
		if out, err := osexec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return fmt.Sprintf(`forge "corp" {
  type           = "gitea"
  url            = "https://git.example.com"
  token          = "tok-forge-7Yc2Wd9Q"
  webhook_secret = "whsec-forge-4Rb8Ns1Lp"
}
project "web" {
  path       = %q
  forge      = "corp"
  repository = "platform/web"
}
`, dir)
}

// The judgement check, serve and reload share refuses (an error, not a
// warning) a project with a forge whose checkout is not a clone of its
// repository, naming the project block's file:line; a clone passes.
func TestCheckRefusesACheckoutThatIsNotItsForgesClone(t *testing.T) {
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skip("git is not on the PATH")
	}
	t.Parallel()
	for _, tc := range []struct{ name, remote, want string }{
		{"a clone", "https://git.example.com/platform/web.git", ""},
		{"another repository", "https://git.example.com/platform/other.git", "another repository"},
		{"another host", "https://git.elsewhere.example/platform/web.git", "not git.example.com"},
		{"no origin", "", "has no remote origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := writeHarness(t, "", forgeProjectConfig(t, tc.remote))
			cfg, err := config.Load(h.cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			line := cfg.Projects["web"].Line
			var found []Problem
			for _, p := range Check(cfg, testEnviron) {
				if p.Where == line {
					found = append(found, p)
				}
			}
			if tc.want == "" {
				if len(found) > 0 {
					t.Fatalf("a clone of its repository is a problem: %v", found)
				}
				return
			}
			if len(found) != 1 || found[0].Severity != SeverityError || !strings.Contains(found[0].What, tc.want) ||
				!strings.Contains(found[0].What, "("+line+")") || len(Errors(found)) != 1 {
				t.Fatalf("want one error at %s saying %q, got %+v", line, tc.want, found)
			}
		})
	}
}
