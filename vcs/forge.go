package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
)

// What the forge side needs of a checkout (docs/forges.md): fetch a pull
// request's head into it without touching its working tree, list what a
// pull request changed, and bring it forward to a merge commit.

// FetchRef fetches refspec (such as "+refs/pull/7/head:refs/switchtender/pull/7")
// from the checkout's remote origin into the repository at dir. header, when
// not empty, is sent as an HTTP header with every request (such as
// "Authorization: token …"): it is passed to git in its environment
// (GIT_CONFIG_COUNT), never in its arguments or a file, so no process list,
// log or .git/config ever holds it. Only the http and https transports are
// allowed. The working tree, index and HEAD are untouched.
func FetchRef(ctx context.Context, dir, header string, refspecs ...string) error {
	for _, r := range refspecs {
		if strings.HasPrefix(r, "-") || strings.ContainsAny(r, " \t\n\x00") {
			return fmt.Errorf("fetching into %s: refspec %q is not a plain refspec", dir, r)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	args := append([]string{
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never",
		"-c", "protocol.http.allow=always", "-c", "protocol.https.allow=always",
		"-C", dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "origin",
	}, refspecs...)
	cmd := osexec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_ASKPASS=/bin/false")
	if header != "" {
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+header)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if header != "" {
			msg = strings.ReplaceAll(msg, header, "[header]")
		}
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("fetching %s into %s: %s", strings.Join(refspecs, " "), dir, msg)
	}
	return nil
}

// ChangedFiles lists the paths (slash paths from the repository's top) that
// differ between the merge base of base and head, and head: what a pull
// request whose head is head changes against base, as the forge shows it.
func ChangedFiles(ctx context.Context, dir, base, head string) ([]string, error) {
	for _, r := range []string{base, head} {
		if err := CheckRef(r); err != nil {
			return nil, err
		}
	}
	mb, err := git(ctx, dir, "merge-base", "--end-of-options", base, head)
	if err != nil {
		return nil, fmt.Errorf("finding where %s left %s: %w", head, base, err)
	}
	out, err := git(ctx, dir, "diff", "--name-only", "-z", "--no-renames", strings.TrimSpace(string(mb)), head, "--")
	if err != nil {
		return nil, fmt.Errorf("listing the files %s changes: %w", head, err)
	}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	return files, nil
}

// ErrNotFastForward is a checkout whose HEAD is not an ancestor of the
// commit it was to be moved to.
var ErrNotFastForward = errors.New("the checkout's HEAD is not an ancestor of the merge commit")

// ErrDirty is a checkout with local changes (tracked or untracked).
var ErrDirty = errors.New("the checkout has local changes")

// FastForward moves the checkout at dir to commit sha, which must already be
// in its repository: its current branch (or detached HEAD) moves forward
// with `git merge --ff-only`. A checkout with local changes is refused with
// ErrDirty, one whose HEAD is not an ancestor of sha with
// ErrNotFastForward; neither is touched.
func FastForward(ctx context.Context, dir, sha string) error {
	head, err := Head(ctx, dir)
	if err != nil {
		return err
	}
	if head.Dirty {
		return fmt.Errorf("%s: %w", dir, ErrDirty)
	}
	if head.SHA == sha {
		return nil
	}
	if _, err := git(ctx, dir, "merge-base", "--is-ancestor", "--end-of-options", head.SHA, sha); err != nil {
		return fmt.Errorf("%s at %s, merge commit %s: %w", dir, head.SHA, sha, ErrNotFastForward)
	}
	if _, err := git(ctx, dir, "merge", "--ff-only", "--quiet", "--no-edit", "--end-of-options", sha); err != nil {
		return fmt.Errorf("moving %s to %s: %w", dir, sha, err)
	}
	return nil
}

// RemoteURL is the URL of the checkout's remote origin.
func RemoteURL(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "remote", "get-url", "origin")
	if err != nil {
		return "", fmt.Errorf("reading the checkout's remote origin: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Branch is the branch the checkout at dir has checked out ("" when its
// HEAD is detached).
func Branch(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		if errors.Is(err, ErrNotRepository) {
			return "", err
		}
		return "", nil
	}
	return strings.TrimSpace(string(out)), nil
}

// CheckBranch refuses a branch name a forge sent that git would not take
// as one, or that could be read as more than one ref in a refspec: only
// letters, digits and "._/-", no "..", no leading "-" or "/", no trailing
// "/" or ".lock", at most 255 bytes.
func CheckBranch(name string) error {
	bad := name == "" || len(name) > 255 || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") || strings.Contains(name, "//")
	if bad || strings.ContainsFunc(name, notBranchRune) {
		return fmt.Errorf("branch name %q is not one Switchtender fetches: letters, digits and ._/- only, no \"..\"", name)
	}
	return nil
}

// notBranchRune reports whether r is outside the runes CheckBranch allows.
func notBranchRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-", r))
}
