package config

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a git repository in a new directory with origin set to
// remote (none when remote is ""), as `git init` and `git remote add` do.
func gitRepo(t *testing.T, remote string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "--quiet")
	if remote != "" {
		git(t, dir, "remote", "add", "origin", remote)
	}
	return dir
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// A project that names a forge is planned from its checkout's origin, so
// CheckClone passes a clone of its repository on the forge's host, in any
// of git's URL forms the forge side can fetch from (https or http, with or
// without .git, a user in the URL, another case), and names every other
// checkout with the project's file:line, what is wrong and the command
// that fixes it.
func TestAForgeCheckoutMustBeACloneOfItsRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on the PATH")
	}
	gitea := &Forge{Name: "corp", Type: ForgeGitea, URL: "https://git.example.com"}
	cases := []struct {
		name   string
		forge  *Forge
		remote string // "-" for a directory that is no repository
		repo   string
		want   []string // nil: a clone
	}{
		{"https", gitea, "https://git.example.com/platform/infra.git", "platform/infra", nil},
		{"https without .git, another case, a trailing slash", gitea, "https://Git.Example.COM/Platform/Infra/", "platform/infra", nil},
		{"https with a user and password", gitea, "https://bot:hunter2hunter2@git.example.com:443/platform/infra", "platform/infra", nil},
		{"http to an http forge", &Forge{Name: "corp", Type: ForgeGitea, URL: "http://git.example.com:3000"}, "http://git.example.com:3000/platform/infra.git", "platform/infra", nil},
		{"github.com from api.github.com", &Forge{Name: "hub", Type: ForgeGitHub, URL: "https://api.github.com"}, "https://github.com/acme/infra.git", "acme/infra", nil},
		{"GitHub Enterprise", &Forge{Name: "ghe", Type: ForgeGitHub, URL: "https://ghe.example.com/api/v3"}, "https://ghe.example.com/acme/infra", "acme/infra", nil},
		{"GitLab nested groups", &Forge{Name: "lab", Type: ForgeGitLab, URL: "https://gitlab.example.com"}, "https://gitlab.example.com/group/sub/infra.git", "group/sub/infra", nil},
		{"Gitea under a sub-path", &Forge{Name: "corp", Type: ForgeGitea, URL: "https://example.com/gitea/"}, "https://example.com/gitea/platform/infra.git", "platform/infra", nil},
		{"ssh scp-form of the repository", gitea, "git@git.example.com:platform/infra.git", "platform/infra",
			[]string{`project "infra" (c.hcl:7) names repository "platform/infra" of forge "corp"`, "that repository over ssh", "HTTP(S) only",
				"remote set-url origin https://git.example.com/platform/infra.git"}},
		{"ssh URL of another repository", gitea, "ssh://git@git.example.com:2222/platform/other.git", "platform/infra",
			[]string{"origin is git.example.com/platform/other, another repository", `clone "platform/infra" there or fix repository`}},
		{"scp-form on another host", gitea, "git@evil.example.net:platform/infra.git", "platform/infra",
			[]string{"origin is on evil.example.net, not git.example.com", "token goes to origin"}},
		{"wrong host", gitea, "https://evil.example.net/platform/infra.git", "platform/infra",
			[]string{`project "infra" (c.hcl:7)`, "origin is on evil.example.net, not git.example.com, the host of forge \"corp\"",
				"remote set-url origin https://git.example.com/platform/infra.git"}},
		{"wrong repository", gitea, "https://git.example.com/platform/other.git", "platform/infra",
			[]string{"origin is git.example.com/platform/other, another repository"}},
		{"wrong repository with a password in its URL", gitea, "https://bot:hunter2hunter2@git.example.com/platform/other", "platform/infra",
			[]string{"another repository"}},
		{"github.com while the forge is Enterprise", &Forge{Name: "ghe", Type: ForgeGitHub, URL: "https://ghe.example.com/api/v3"}, "https://github.com/acme/infra", "acme/infra",
			[]string{"origin is on github.com, not ghe.example.com", "remote set-url origin https://ghe.example.com/acme/infra.git"}},
		{"plain http to an https forge", gitea, "http://git.example.com/platform/infra.git", "platform/infra",
			[]string{"plain http while the forge's url is https", "in clear"}},
		{"a local path", gitea, "/srv/git/infra.git", "platform/infra", []string{"origin is a local path"}},
		{"no origin", gitea, "", "platform/infra",
			[]string{"has no remote origin", "remote add origin https://git.example.com/platform/infra.git"}},
		{"not a repository", gitea, "-", "platform/infra",
			[]string{`project "infra" (c.hcl:7)`, "is not a git repository", "git clone https://git.example.com/platform/infra.git"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.remote != "-" {
				dir = gitRepo(t, tc.remote)
			}
			pr := &Project{Name: "infra", Path: dir, Forge: tc.forge.Name, Repository: tc.repo, Line: "c.hcl:7"}
			err := CheckClone(context.Background(), pr, tc.forge)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("a clone of %s is refused: %v", tc.repo, err)
			case tc.want == nil:
				return
			case err == nil:
				t.Fatalf("origin %q passes as a clone of %s on %s", tc.remote, tc.repo, tc.forge.URL)
			}
			if testing.Verbose() {
				t.Log(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the problem lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the problem repeats the password in origin's URL:\n%v", err)
			}
		})
	}
}

// The project's path may be a directory inside the clone: its repository's
// origin is the one fetched from.
func TestAForgeCheckoutMayBeADirectoryOfTheClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on the PATH")
	}
	top := gitRepo(t, "https://git.example.com/platform/infra.git")
	sub := filepath.Join(top, "envs", "prod")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &Forge{Name: "corp", Type: ForgeGitea, URL: "https://git.example.com"}
	if err := CheckClone(context.Background(), &Project{Name: "infra", Path: sub, Forge: "corp", Repository: "platform/infra", Line: "c.hcl:1"}, f); err != nil {
		t.Fatal(err)
	}
}

// RemoteRepository reads each of git's URL forms into scheme, host and
// repository path.
func TestRemoteRepositoryReadsGitsURLForms(t *testing.T) {
	for remote, want := range map[string][3]string{
		"https://git.example.com/platform/infra.git":       {"https", "git.example.com", "platform/infra"},
		"HTTPS://User:pw@Git.Example.com:8443/a/b/":        {"https", "git.example.com", "a/b"},
		"ssh://git@git.example.com:2222/a/b.git":           {"ssh", "git.example.com", "a/b"},
		"git+ssh://git@git.example.com/a/b":                {"ssh", "git.example.com", "a/b"},
		"git@git.example.com:a/b.git":                      {"ssh", "git.example.com", "a/b"},
		"git.example.com:a/b":                              {"ssh", "git.example.com", "a/b"},
		"git://git.example.com/a/b.git":                    {"git", "git.example.com", "a/b"},
		"file:///srv/git/a.git":                            {"file", "", "srv/git/a"},
		"/srv/git/a.git":                                   {"file", "", "srv/git/a"},
		"./relative/a":                                     {"file", "", "./relative/a"},
		"  https://git.example.com/group/sub/name.GIT  \n": {"https", "git.example.com", "group/sub/name"},
	} {
		s, h, p := RemoteRepository(remote)
		if got := [3]string{s, h, p}; got != want {
			t.Errorf("RemoteRepository(%q) = %q, want %q", remote, got, want)
		}
	}
}
