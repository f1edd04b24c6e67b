package testkit

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CloneURL is the HTTP address repo ("owner/name") clones from. It holds
// no credentials: the git helpers send the token in a header.
func (g *Gitea) CloneURL(repo string) string { return g.URL + "/" + repo + ".git" }

// Git runs git with args in dir as as: over HTTP, as's token goes in an
// Authorization header set through GIT_CONFIG_COUNT/KEY/VALUE in the
// environment (never in the arguments or a URL); no system or global git
// configuration is read, nothing prompts, and commits are authored by as.
// It returns the trimmed output and fails the test when git fails or runs
// for more than two minutes.
func (g *Gitea) Git(as *GiteaUser, dir string, args ...string) string {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(as)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s as %s: %v\n%s", strings.Join(args, " "), as.Name, err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitEnv(as *GiteaUser) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") {
			env = append(env, e)
		}
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME="+as.Name, "GIT_AUTHOR_EMAIL="+as.Email,
		"GIT_COMMITTER_NAME="+as.Name, "GIT_COMMITTER_EMAIL="+as.Email,
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: token "+as.Token,
		"GIT_CONFIG_KEY_1=commit.gpgSign", "GIT_CONFIG_VALUE_1=false",
	)
}

// Clone clones branch of repo as as into a new temporary directory and
// returns the directory.
func (g *Gitea) Clone(as *GiteaUser, repo, branch string) string {
	g.t.Helper()
	dir := filepath.Join(g.t.TempDir(), "clone")
	g.Git(as, filepath.Dir(dir), "clone", "--quiet", "--branch", branch, g.CloneURL(repo), dir)
	return dir
}

// CreateBranchAndPush makes branch of repo from base with one commit of
// files (path -> text; "" removes the file, as WriteFiles) and message,
// pushes it as as, and returns the commit (40 hex).
func (g *Gitea) CreateBranchAndPush(as *GiteaUser, repo, base, branch string, files map[string]string, message string) string {
	g.t.Helper()
	return g.commitAndPush(as, repo, base, branch, files, message, false)
}

// PushToBranch adds one commit of files and message to the existing
// branch of repo, pushes it as as, and returns the commit (40 hex).
func (g *Gitea) PushToBranch(as *GiteaUser, repo, branch string, files map[string]string, message string) string {
	g.t.Helper()
	return g.commitAndPush(as, repo, branch, branch, files, message, false)
}

// ForcePushBranch replaces branch of repo with base plus one commit of
// files and message (a force push: the branch's commits since base are
// gone) as as, and returns the commit (40 hex).
func (g *Gitea) ForcePushBranch(as *GiteaUser, repo, base, branch string, files map[string]string, message string) string {
	g.t.Helper()
	return g.commitAndPush(as, repo, base, branch, files, message, true)
}

func (g *Gitea) commitAndPush(as *GiteaUser, repo, from, to string, files map[string]string, message string, force bool) string {
	g.t.Helper()
	dir := g.Clone(as, repo, from)
	WriteFiles(g.t, dir, files)
	g.Git(as, dir, "add", "-A")
	g.Git(as, dir, "commit", "--quiet", "--allow-empty", "-m", message)
	push := []string{"push", "--quiet", "origin", "HEAD:refs/heads/" + to}
	if force {
		push = append(push, "--force")
	}
	g.Git(as, dir, push...)
	return g.Git(as, dir, "rev-parse", "HEAD")
}
