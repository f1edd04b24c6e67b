package config

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	osexec "os/exec"
	"strings"

	"github.com/switchtender/switchtender/vcs"
)

// A project that names a forge is planned from its checkout: the forge
// side fetches a pull request's head from the checkout's remote origin,
// over HTTP(S) with the forge's token in a header (vcs.FetchRef). So the
// checkout must be a clone of that very repository on that very host, or
// the token goes to another host and the plans are of another repository.
// Load does not read it (it runs git); CheckClone does, for the server's
// judgement that check, serve and reload share.

// CheckClone reports whether project pr's checkout is a clone of its
// repository on forge f: pr.Path is in a git working tree (not one its
// repository ignores) whose remote origin names f's host (CloneHost,
// compared without case or port) and pr.Repository (compared without case,
// after the forge URL's own path for a Gitea or GitLab under a sub-path),
// over http or https (https when f's url is https). The error is one
// sentence naming the project and its file:line, what is wrong and the
// command that fixes it; it never repeats the origin URL as written (it may hold a password).
// Each git process is bounded by vcs.Timeout and ctx.
func CheckClone(ctx context.Context, pr *Project, f *Forge) error {
	what := fmt.Sprintf("project %q (%s) names repository %q of forge %q", pr.Name, pr.Line, pr.Repository, f.Name)
	want := f.CloneURL(pr.Repository)
	if _, err := osexec.LookPath("git"); err != nil {
		return fmt.Errorf("%s, but git is not on the PATH, and the forge side fetches pull requests into the checkout with it: install git", what)
	}
	if !vcs.IsRepository(ctx, pr.Path) {
		return fmt.Errorf("%s, but its path %s is not a git repository (or is one its repository ignores): clone the repository there (git clone %s %s) or fix path", what, pr.Path, want, pr.Path)
	}
	remote, err := vcs.RemoteURL(ctx, pr.Path)
	switch {
	case err != nil && strings.Contains(err.Error(), "No such remote"):
		return fmt.Errorf("%s, but its checkout %s has no remote origin, which the forge side fetches pull requests from: git -C %s remote add origin %s", what, pr.Path, pr.Path, want)
	case err != nil:
		return fmt.Errorf("%s, but its checkout's remote origin cannot be read (%v): fix the checkout at %s", what, errors.Unwrap(err), pr.Path)
	}
	return originProblem(what, pr, f, remote)
}

// originProblem compares the origin URL remote of pr's checkout with what
// forge f serves pr.Repository from; nil when it is a clone of it.
func originProblem(what string, pr *Project, f *Forge, remote string) error {
	scheme, host, path := RemoteRepository(remote)
	fix := fmt.Sprintf("git -C %s remote set-url origin %s", pr.Path, f.CloneURL(pr.Repository))
	base, _ := url.Parse(f.URL)
	switch {
	case host == "":
		return fmt.Errorf("%s, but its checkout's origin is a local path, not a URL on %s: %s", what, f.CloneHost(), fix)
	case !strings.EqualFold(host, f.CloneHost()):
		return fmt.Errorf("%s, but its checkout's origin is on %s, not %s, the host of forge %q, and the forge's token goes to origin with every fetch: %s", what, host, f.CloneHost(), f.Name, fix)
	case !f.servesPath(path, pr.Repository):
		return fmt.Errorf("%s, but its checkout's origin is %s/%s, another repository: clone %q there or fix repository, or %s", what, host, path, pr.Repository, fix)
	case scheme != "http" && scheme != "https":
		return fmt.Errorf("%s, and its checkout's origin is that repository over %s, but the forge side fetches pull requests over HTTP(S) only, with the forge's token in a header: %s", what, scheme, fix)
	case scheme == "http" && base != nil && base.Scheme == "https":
		return fmt.Errorf("%s, but its checkout's origin is plain http while the forge's url is https, so the forge's token would travel in clear with every fetch: %s", what, fix)
	}
	return nil
}

// CloneHost is the host f's repositories are cloned from: its url's host
// name, lower case, without a port; a GitHub forge whose url is
// https://api.github.com clones from github.com.
func (f *Forge) CloneHost() string {
	u, err := url.Parse(f.URL)
	if err != nil {
		return ""
	}
	h := strings.ToLower(u.Hostname())
	if f.Type == ForgeGitHub && h == "api.github.com" {
		return "github.com"
	}
	return h
}

// CloneURL is the https (or http, as f's url is) URL a clone of repository
// repo ("owner/name") on f fetches from: the url's scheme, host and port,
// a Gitea's or GitLab's sub-path, then repo and ".git". GitHub serves
// clones at its top (github.com for api.github.com, the Enterprise host
// without /api/v3).
func (f *Forge) CloneURL(repo string) string {
	u, err := url.Parse(f.URL)
	if err != nil {
		return repo
	}
	host := u.Host
	if f.Type == ForgeGitHub && strings.EqualFold(u.Hostname(), "api.github.com") {
		host = "github.com"
	}
	return (&url.URL{Scheme: u.Scheme, Host: host, Path: "/" + strings.TrimPrefix(f.subPath()+"/"+repo, "/") + ".git"}).String()
}

// subPath is a Gitea's or GitLab's url path without its slashes ("" at
// the host's top, and always for GitHub, whose API path is not where
// clones are).
func (f *Forge) subPath() string {
	if f.Type == ForgeGitHub {
		return ""
	}
	u, err := url.Parse(f.URL)
	if err != nil {
		return ""
	}
	return strings.Trim(u.Path, "/")
}

// servesPath reports whether a remote's repository path (as
// RemoteRepository gives it) is repo on f: repo itself, or, over HTTP(S)
// to a forge under a sub-path, that sub-path then repo. Compared without
// case, as the forges route repository paths.
func (f *Forge) servesPath(path, repo string) bool {
	if strings.EqualFold(path, repo) {
		return true
	}
	sub := f.subPath()
	return sub != "" && strings.EqualFold(path, sub+"/"+repo)
}

// RemoteRepository reads a git remote URL as a forge hosts it: the
// transport's scheme ("https", "http", "ssh", "git", or "file" for a local
// path), the host name (lower case, without user or port; "" for a local
// path) and the repository path (without leading or trailing "/" and
// without ".git"). It takes git's URL forms, scheme://[user@]host[:port]/path
// ("git+ssh" and "ssh+git" read as "ssh"), and the scp-like
// [user@]host:path, which git reads as ssh.
func RemoteRepository(remote string) (scheme, host, path string) {
	remote = strings.TrimSpace(remote)
	if i := strings.Index(remote, "://"); i > 0 {
		u, err := url.Parse(remote)
		if err != nil {
			return strings.ToLower(remote[:i]), "", ""
		}
		scheme = strings.ToLower(u.Scheme)
		if scheme == "git+ssh" || scheme == "ssh+git" {
			scheme = "ssh"
		}
		if scheme == "file" {
			return scheme, "", cleanRepoPath(u.Path)
		}
		return scheme, strings.ToLower(u.Hostname()), cleanRepoPath(u.Path)
	}
	colon := strings.Index(remote, ":")
	if colon > 0 && !strings.Contains(remote[:colon], "/") {
		h := remote[:colon]
		if at := strings.LastIndex(h, "@"); at >= 0 {
			h = h[at+1:]
		}
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		return "ssh", strings.ToLower(h), cleanRepoPath(remote[colon+1:])
	}
	return "file", "", cleanRepoPath(remote)
}

// cleanRepoPath trims a remote's path to the repository's: no "/" at
// either end, no "~" home prefix, no ".git" suffix.
func cleanRepoPath(p string) string {
	p = strings.Trim(p, "/")
	p = strings.TrimPrefix(p, "~/")
	p = strings.TrimSuffix(p, "/")
	if strings.HasSuffix(strings.ToLower(p), ".git") {
		p = p[:len(p)-len(".git")]
	}
	return strings.Trim(p, "/")
}
