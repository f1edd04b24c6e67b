package runstep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// ExportCommit is the export step wherever the plan runs (the control
// node or a relay worker): it writes commit c of the git checkout into
// tree (cleared first), removes what a branch may not bring
// (DropUntrusted), refuses another backend than the checkout's working
// directory dir has, puts the checkout's lock file and a read-only copy of
// its local state in place, and returns the checkout's place in the tree
// (project) and the working directory command names there (wd).
func ExportCommit(ctx context.Context, checkout, dir, command string, c store.Commit, tree string) (project, wd string, err error) {
	if err := os.RemoveAll(tree); err != nil {
		return "", "", fmt.Errorf("clearing the private tree: %w", err)
	}
	if err := vcs.Export(ctx, checkout, c.SHA, tree); err != nil {
		return "", "", fmt.Errorf("writing commit %s (%s) into the run's private directory: %w; nothing planned", c.SHA, c.Ref, err)
	}
	if err := DropUntrusted(tree); err != nil {
		return "", "", fmt.Errorf("clearing what the commit may not bring: %w", err)
	}
	prefix, err := vcs.Prefix(ctx, checkout)
	if err != nil {
		return "", "", fmt.Errorf("%w; nothing planned", err)
	}
	project = filepath.Join(tree, filepath.FromSlash(prefix)) // the checkout's place in the commit
	if wd, err = exec.ResolveWorkingDir(project, command); err != nil {
		return "", "", End(store.StatusFailed, -1, "Commit %s (%s) has no working directory %q inside it: %v; nothing planned.", c.SHA, c.Ref, command, err)
	}
	if err := SameBackend(dir, wd); err != nil {
		return "", "", err
	}
	if err := useCheckoutLockFile(dir, wd); err != nil {
		return "", "", err
	}
	if err := CopyLocalState(dir, checkout, project, wd); err != nil {
		return "", "", err
	}
	return project, wd, nil
}

// CopyLocalState copies the local state file of the checkout's working
// directory dir, if it has one, to the same place in the pull request's
// tree (or into the tree's working directory wd when the file lies outside
// the checkout), read only. Other backends need nothing: the tree's
// configuration names them.
func CopyLocalState(dir, checkout, tree, wd string) error {
	src, local := LocalStatePath(dir)
	if !local {
		return nil
	}
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	rel, err := filepath.Rel(tree, filepath.Join(wd, "terraform.tfstate"))
	if err != nil {
		return fmt.Errorf("copying the local state: %w", err)
	}
	if root, err := filepath.EvalSymlinks(checkout); err == nil {
		if exec.Inside(root, src) {
			rel, _ = filepath.Rel(root, src)
		}
	}
	dest, err := PlaceInTree(tree, rel)
	if err != nil {
		return End(store.StatusRefused, -1, "The commit cannot take the checkout's state: %v; nothing planned.", err)
	}
	if err := os.Remove(dest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("copying the local state: %w", err) // a state file the commit carries is not the checkout's state
	}
	if err := CopyFile(src, dest); err != nil {
		return fmt.Errorf("copying the local state: %w", err)
	}
	return os.Chmod(dest, 0o400)
}

// PlaceInTree returns tree/rel after making its parent directories, none of
// which may be a symbolic link (the commit's tree is the branch's to shape:
// a link there would lead the copy out of the tree).
func PlaceInTree(tree, rel string) (string, error) {
	dir := tree
	parts := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(dir, 0o700); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		case !fi.IsDir():
			return "", fmt.Errorf("%s in the commit is not a directory (%s)", filepath.ToSlash(strings.TrimPrefix(dir, tree+string(filepath.Separator))), fi.Mode().Type())
		}
	}
	return filepath.Join(dir, parts[len(parts)-1]), nil
}

// DropUntrusted removes from a pull request's tree what OpenTofu would
// take from it without the scan reading it, or write through: every
// .terraform (committed providers and modules), every terraform.d (an
// implied local provider mirror), and every symbolic link that leads out
// of the tree or nowhere (a lock file or state written through one would
// land outside). A branch's providers come from where the checkout's come
// from (useCheckoutLockFile).
func DropUntrusted(tree string) error {
	root, err := filepath.EvalSymlinks(tree)
	if err != nil {
		return err
	}
	var drop []string
	err = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); p != tree && (n == ".terraform" || n == "terraform.d") {
			drop = append(drop, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		if d.Type()&fs.ModeSymlink != 0 && !linkStaysIn(root, p) {
			drop = append(drop, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range drop {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// linkStaysIn reports whether the symbolic link p resolves to something
// that exists inside root (symlinks resolved).
func linkStaysIn(root, p string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	return exec.Inside(root, real)
}

// SameBackend refuses a pull request whose root module declares another
// backend, cloud or encryption block than the checkout's working
// directory: its plan runs against the state the checkout's runs use, read
// as they read it, and a backend or key provider the branch chose would get
// the run's credentials (and another state).
func SameBackend(checkoutDir, wd string) error {
	want, err := scan.Backend(checkoutDir)
	if err != nil {
		return End(store.StatusRefused, -1, "The checkout's backend cannot be read to compare the pull request's with it: %v; nothing planned.", err)
	}
	got, err := scan.Backend(wd)
	if err != nil {
		return End(store.StatusRefused, -1, "The pull request's backend cannot be read: %v; nothing planned.", err)
	}
	if got != want {
		return End(store.StatusRefused, -1, "The pull request changes the working directory's backend, cloud or encryption block, or a variable, local or .tfvars value one of them takes; its plan runs against the state the checkout's runs use, read as they read it, with their credentials, so a change there is refused rather than planned. Merge that change first; nothing planned.")
	}
	return nil
}

// useCheckoutLockFile puts the checkout's dependency lock file in place of
// the branch's (or removes the branch's when the checkout has none): init
// then runs with -lockfile=readonly, so the plan installs only providers
// the checkout already pins, with their hashes.
func useCheckoutLockFile(checkoutDir, wd string) error {
	dest := filepath.Join(wd, LockFileName)
	if err := os.Remove(dest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the branch's lock file: %w", err)
	}
	src := filepath.Join(checkoutDir, LockFileName)
	if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if err := CopyFile(src, dest); err != nil {
		return fmt.Errorf("copying the checkout's lock file: %w", err)
	}
	return nil
}

// LockFileName is OpenTofu's dependency lock file.
const LockFileName = ".terraform.lock.hcl"
