// Package vcs reads what a run needs from a project checkout that is a git
// repository: the commit a run ran (HEAD, and whether the working tree was
// dirty), the commit a pull request's plan names (a branch, tag or SHA), and
// that commit's tree exported into a private directory without touching the
// checkout (spec "What a plan runs, and what the gate reads";
// docs/pull-requests.md).
//
// It runs the git on PATH with a fixed, minimal configuration: no pager, no
// prompts, no fsmonitor or hooks from the repository's configuration, so
// reading a checkout runs nothing it names.
package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"time"
	"unicode"
)

// Timeout bounds each git process.
const Timeout = 2 * time.Minute

// ErrNotRepository is returned (wrapped) for a directory that is not inside
// a git working tree.
var ErrNotRepository = errors.New("not a git repository")

// Commit is the commit a run ran: its full SHA, and whether the working tree
// had changes git would show in `git status` (tracked or untracked).
type Commit struct {
	SHA   string `json:"sha"`
	Dirty bool   `json:"dirty"`
}

// git runs git with args in dir and returns its stdout. stderr, trimmed, is
// in the error.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	full := append([]string{
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
		"-c", "core.pager=cat", "-c", "protocol.allow=never",
		"-C", dir,
	}, args...)
	cmd := osexec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "not a git repository") {
			return nil, fmt.Errorf("%s: %w", dir, ErrNotRepository)
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// IsRepository reports whether dir is inside a git working tree and not
// ignored by it (a directory the repository ignores, such as a demo's data
// beside the sources, is none of its commits). One git process:
// check-ignore exits 0 for an ignored path, 1 for one that is not, and
// fails outside a repository.
func IsRepository(ctx context.Context, dir string) bool {
	_, err := git(ctx, dir, "check-ignore", "-q", ".")
	return err != nil && !errors.Is(err, ErrNotRepository)
}

// Prefix returns where dir lies in its repository's tree: "" at the top,
// else a slash path ending in "/" ("infra/"), as `git rev-parse
// --show-prefix` prints it.
func Prefix(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return "", fmt.Errorf("reading where %s lies in its repository: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Head returns the commit dir's working tree has checked out and whether it
// is dirty. The error wraps ErrNotRepository when dir is not in a git
// working tree; a repository with no commit yet is an error too.
func Head(ctx context.Context, dir string) (Commit, error) {
	if !IsRepository(ctx, dir) {
		return Commit{}, fmt.Errorf("%s: %w", dir, ErrNotRepository)
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		if errors.Is(err, ErrNotRepository) {
			return Commit{}, err
		}
		return Commit{}, fmt.Errorf("reading HEAD of %s: %w", dir, err)
	}
	st, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return Commit{}, fmt.Errorf("reading whether %s is dirty: %w", dir, err)
	}
	return Commit{SHA: strings.TrimSpace(string(out)), Dirty: len(bytes.TrimSpace(st)) > 0}, nil
}

// CheckRef refuses a ref that git could read as an option or that holds
// characters no branch, tag or SHA has (control characters, spaces).
func CheckRef(ref string) error {
	switch {
	case ref == "":
		return errors.New("the ref is empty: give a branch, tag or commit SHA")
	case strings.HasPrefix(ref, "-"):
		return fmt.Errorf("ref %q starts with '-': give a branch, tag or commit SHA", ref)
	case len(ref) > 255:
		return fmt.Errorf("ref is %d bytes; a branch, tag or SHA is at most 255", len(ref))
	}
	for _, r := range ref {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return fmt.Errorf("ref %q holds a space or control character; give a branch, tag or commit SHA", ref)
		}
	}
	return nil
}

// Resolve returns the full SHA of the commit ref names in the repository at
// dir: a branch, tag, remote-tracking branch or (abbreviated) SHA. A ref
// that names no commit is an error saying so.
func Resolve(ctx context.Context, dir, ref string) (string, error) {
	if err := CheckRef(ref); err != nil {
		return "", err
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		if errors.Is(err, ErrNotRepository) {
			return "", err
		}
		return "", fmt.Errorf("ref %q names no commit in %s: fetch it into the checkout first (a remote's branch is origin/NAME until a local branch tracks it), or give a branch, tag or SHA it has", ref, dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// MaxExportBytes bounds the bytes Export writes: a tree larger than this is
// refused rather than filling the disk.
const MaxExportBytes = 1 << 30

// Export writes the tree of commit sha in the repository at dir into dest
// (created, mode 0700): regular files with their executable bit,
// directories and symbolic links (written as they are stored; whoever reads
// the tree decides what a link may reach). Blobs are read raw (git ls-tree
// and cat-file), so no attribute of the commit applies: no filter driver,
// no export-subst, no line-ending conversion runs. Submodules are left out.
// It reads the repository's objects only: the checkout's working tree,
// index and HEAD are untouched. Paths that would leave dest are refused.
func Export(ctx context.Context, dir, sha, dest string) error {
	if err := CheckRef(sha); err != nil {
		return err
	}
	list, err := git(ctx, dir, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", sha)
	if err != nil {
		return fmt.Errorf("listing commit %s: %w", sha, err)
	}
	entries, err := parseTree(list)
	if err != nil {
		return fmt.Errorf("listing commit %s: %w", sha, err)
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dest, err)
	}
	if err := writeBlobs(ctx, dir, entries, dest); err != nil {
		return fmt.Errorf("exporting commit %s: %w", sha, err)
	}
	return nil
}
