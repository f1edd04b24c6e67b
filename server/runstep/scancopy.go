package runstep

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/store"
)

// configSuffixes are the file names the scan's copy keeps: the files
// OpenTofu reads as configuration (package scan chooses among them).
var configSuffixes = []string{".tf", ".tf.json", ".tofu", ".tofu.json"}

// CopyConfiguration copies the tree under root into dest, the private copy
// a scanned run's processes run in: directories, regular files (the
// configuration and what it reads: templates, scripts, the lock file) and
// symbolic links (as links: package scan does not follow one out of the
// copy). .git and every .terraform are left out, so the get installs into a
// fresh one and nothing a checkout committed or left behind is read; so are
// local state files (isStateName: the run's own is copied fresh when it
// starts to plan, enterCopyStep), anything that is neither a file, a
// directory nor a link, dest itself and the directories in skip (the data
// directory, when it lies in the checkout).
func CopyConfiguration(root, dest string, skip ...string) error {
	skip = realPaths(append(skip, dest))
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if left, err := leftOut(p, rel, d, skip); left {
			return err
		}
		return copyEntry(p, rel, filepath.Join(dest, rel), d)
	})
}

// realPaths replaces, in place, each of paths that resolves with its path
// through no symbolic link, and returns paths.
func realPaths(paths []string) []string {
	for i, s := range paths {
		if real, err := filepath.EvalSymlinks(s); err == nil {
			paths[i] = real
		}
	}
	return paths
}

// leftOut reports whether a walk of the configuration leaves out p (rel
// from the walk's root), as the scan's copy and configEntries both do: a
// directory in skip, and .git or .terraform below the root, whatever it is
// (a directory, a link out of the checkout): the copy has none, so the get
// installs into a fresh one. The error is filepath.SkipDir for a directory.
func leftOut(p, rel string, d fs.DirEntry, skip []string) (bool, error) {
	if d.IsDir() && slices.Contains(skip, p) {
		return true, filepath.SkipDir
	}
	if rel != "." && (d.Name() == ".git" || d.Name() == ".terraform") {
		if d.IsDir() {
			return true, filepath.SkipDir
		}
		return true, nil
	}
	return false, nil
}

// copyEntry copies the walked entry d at p (rel from the root) to target
// in the scan's copy: a directory is made, a link copied as a link, a
// regular file other than local state copied; a configuration file that
// is not a regular file is refused, and anything else left out.
func copyEntry(p, rel, target string, d fs.DirEntry) error {
	switch {
	case d.IsDir():
		return os.MkdirAll(target, 0o700)
	case d.Type()&fs.ModeSymlink != 0:
		link, err := os.Readlink(p)
		if err != nil {
			return err
		}
		return os.Symlink(link, target)
	case isConfigName(d.Name()) && !d.Type().IsRegular():
		return fmt.Errorf("%s is named like a configuration file but is not a regular file (%s); only regular files are read as configuration, so remove it", rel, d.Type())
	case d.Type().IsRegular() && !isStateName(d.Name()):
		return CopyFile(p, target)
	}
	return nil
}

// isStateName reports whether a file of this name is OpenTofu's local
// state, its backup or its lock (left out of the scan's copy).
func isStateName(name string) bool {
	return strings.HasSuffix(name, ".tfstate") || strings.HasSuffix(name, ".tfstate.backup") || name == ".terraform.tfstate.lock.info"
}

// configEntries lists what in the tree under root decides what OpenTofu
// runs there, by slash path relative to root: each configuration file and
// dependency lock file with its sha256, and each symbolic link with its
// target; .git, every .terraform and the directories in skip are left out,
// as CopyConfiguration leaves them out.
func configEntries(root string, skip ...string) (map[string]string, error) {
	skip = realPaths(skip)
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if left, err := leftOut(p, rel, d, skip); left {
			return err
		}
		v, err := entryOf(p, d)
		if err != nil {
			return err
		}
		if v != "" {
			out[filepath.ToSlash(rel)] = v
		}
		return nil
	})
	return out, err
}

// entryOf is what configEntries records of the walked entry d at p: a
// link's target, "not a regular file" for a configuration or lock file
// that is not one, a configuration or lock file's sha256; "" for anything
// else (a directory, another file).
func entryOf(p string, d fs.DirEntry) (string, error) {
	name := d.Name()
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		return "a link to " + link, nil
	case d.IsDir() || !isConfigName(name) && name != scan.LockFileName:
		return "", nil
	case !d.Type().IsRegular():
		return "not a regular file", nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// SameConfiguration refuses (an *Outcome naming what changed) a run whose
// checkout no longer holds, under root, the configuration its private
// copy holds: a configuration file, lock file or link changed, added or
// removed since the scan copied it. skip is left out of root's walk (the
// data directory).
func SameConfiguration(root, copyRoot string, skip ...string) error {
	want, err := configEntries(copyRoot)
	if err != nil {
		return fmt.Errorf("reading the scan's private copy: %w", err)
	}
	got, err := configEntries(root, skip...)
	if err != nil {
		return End(store.StatusFailed, -1, "The checkout's configuration cannot be read again to check it against what the scan read (%v); nothing planned. Launch the run again to scan what is there now.", err)
	}
	var diff []string
	for k, v := range want {
		switch g, ok := got[k]; {
		case !ok:
			diff = append(diff, k+" is gone")
		case g != v:
			diff = append(diff, k+" changed")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diff = append(diff, k+" is new")
		}
	}
	if len(diff) == 0 {
		return nil
	}
	slices.Sort(diff)
	return End(store.StatusRefused, -1, "The checkout's configuration changed after the scan read it: %s. Nothing ran of what changed, and nothing planned; launch the run again to scan what is there now.", strings.Join(BoundList(diff, 20), "; "))
}

// BoundList keeps the first n of items and says how many more there are.
func BoundList(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("%d more", len(items)-n))
}

func isConfigName(name string) bool {
	for _, s := range configSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// CopyFile copies the regular file src to a new file dest (never through a
// link), keeping its executable bits.
func CopyFile(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return out.Close()
}

// CopyEntry is what EnterCopy needs: the tree the scan copied (root: the
// checkout, or a pull request's exported commit) and the copy of it, the
// working directory relative to both, the checkout's own working directory
// and checkout (whose local state the run plans from), the data directory
// (left out of root's walk) and the run's environment (TF_WORKSPACE).
type CopyEntry struct {
	Root, CopyRoot, Rel string
	LiveDir, Checkout   string
	DataDir             string
	Env                 []string
}

// EnterCopy makes the scan's private copy ready for the run's processes
// and returns the working directory in it: the configuration must be
// unchanged since the scan read it, and the checkout's local state of the
// selected workspace is copied in, read only.
func EnterCopy(in CopyEntry) (string, error) {
	if err := SameConfiguration(in.Root, in.CopyRoot, in.DataDir); err != nil {
		return "", err
	}
	wd := filepath.Join(in.CopyRoot, in.Rel)
	if err := CopyLocalState(in.LiveDir, in.Checkout, in.CopyRoot, wd); err != nil {
		return "", err
	}
	if err := copyWorkspace(in.LiveDir, wd, EnvValue(in.Env, "TF_WORKSPACE")); err != nil {
		return "", err
	}
	return wd, nil
}

// copyWorkspace carries the workspace selected in the checkout's working
// directory liveDir (its .terraform/environment, or TF_WORKSPACE when
// set) into the copy's working directory wd, with that workspace's local
// state (terraform.tfstate.d/NAME/terraform.tfstate) read only. A name
// that is not one path element is refused.
func copyWorkspace(liveDir, wd, fromEnv string) error {
	ws := fromEnv
	if b, err := os.ReadFile(filepath.Join(liveDir, ".terraform", "environment")); err == nil {
		if err := os.MkdirAll(filepath.Join(wd, ".terraform"), 0o700); err != nil {
			return fmt.Errorf("carrying the selected workspace: %w", err)
		}
		if err := os.WriteFile(filepath.Join(wd, ".terraform", "environment"), b, 0o600); err != nil {
			return fmt.Errorf("carrying the selected workspace: %w", err)
		}
		ws = cmp.Or(fromEnv, strings.TrimSpace(string(b)))
	}
	if ws == "" || ws == "default" {
		return nil
	}
	if ws == "." || ws == ".." || strings.ContainsAny(ws, `/\`+"\x00") {
		return End(store.StatusRefused, -1, "The selected workspace %q is not a workspace name; nothing planned.", ws)
	}
	src := filepath.Join(liveDir, "terraform.tfstate.d", ws, "terraform.tfstate")
	if _, err := os.Stat(src); err != nil {
		return nil // none yet, or another backend's workspace
	}
	dir := filepath.Join(wd, "terraform.tfstate.d", ws)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("copying the workspace's state: %w", err)
	}
	dest := filepath.Join(dir, "terraform.tfstate")
	if err := os.Remove(dest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("copying the workspace's state: %w", err)
	}
	if err := CopyFile(src, dest); err != nil {
		return fmt.Errorf("copying the workspace's state: %w", err)
	}
	return os.Chmod(dest, 0o400)
}
