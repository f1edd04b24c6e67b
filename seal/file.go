package seal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// wipeBlock is the size of the zero buffer Wipe writes with.
const wipeBlock = 64 << 10

// Wipe overwrites the regular file at path with zeros over its whole length,
// fsyncs it, removes it and fsyncs its directory (DESIGN invariant 2: a plan's
// plaintext is wiped when the apply ends). A missing file is not an error. A
// symbolic link is removed without touching what it points to. A directory is
// an error.
//
// Overwriting is best effort against recovery from the file system's blocks;
// on copy-on-write or journaling file systems old blocks may survive, which is
// why plaintext lives only briefly in a private 0700 directory.
func Wipe(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("wiping %s: %w", path, err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("wiping %s: %w", path, err)
		}
		return nil
	case st.IsDir():
		return fmt.Errorf("wiping %s: it is a directory; Wipe removes files (use WipeTree for a directory's files)", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("wiping %s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("wiping %s: %w", path, err)
	}
	if err := zeroFile(f); err != nil {
		f.Close()
		return fmt.Errorf("wiping %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("wiping %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("wiping %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

func zeroFile(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	zeros := make([]byte, wipeBlock)
	for left := st.Size(); left > 0; {
		n := int64(len(zeros))
		if left < n {
			n = left
		}
		if _, err := f.Write(zeros[:n]); err != nil {
			return err
		}
		left -= n
	}
	return f.Sync()
}

// WipeTree wipes with [Wipe] every regular file under dir (recursively,
// without following symbolic links) whose base name match accepts, and returns
// how many it wiped. The server calls it at start to wipe plaintext plan
// files a crash left behind (DESIGN invariant 2). A missing dir wipes nothing
// and is not an error. It goes on past a file it cannot wipe and returns all
// such errors joined, with the count of those it did wipe.
func WipeTree(dir string, match func(name string) bool) (int, error) {
	if match == nil {
		return 0, errors.New("wiping files: no match function given")
	}
	n := 0
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			errs = append(errs, fmt.Errorf("wiping under %s: %w", dir, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !match(d.Name()) {
			return nil
		}
		if err := Wipe(path); err != nil {
			errs = append(errs, err)
			return nil
		}
		n++
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// WriteFile writes data into dir/name with file mode 0600 and fsyncs it,
// returning the path. dir must already exist and be a directory only its
// owner can access (mode 0700 or stricter); otherwise it is refused with an
// error naming the mode and saying to `chmod 700` it, because a plan's
// plaintext may only exist in a run's private directory (spec: "written only
// into the run's private directory"). name must be a plain file name (no
// path separator, not "." or ".."). An existing file is wiped and replaced; a
// symbolic link at dir/name is refused. On a failed write the partial file is wiped.
func WriteFile(dir, name string, data []byte) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return "", fmt.Errorf("writing private file: name %q must be a plain file name without a path separator", name)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := clearPrivatePath(path); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("writing private file %s: %w", path, err)
	}
	fail := func(err error) (string, error) {
		f.Close()
		_ = Wipe(path)
		return "", fmt.Errorf("writing private file %s: %w", path, err)
	}
	// The umask may have cleared bits of 0600; set it exactly.
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = Wipe(path)
		return "", fmt.Errorf("writing private file %s: %w", path, err)
	}
	return path, nil
}

// checkPrivateDir refuses dir unless it is an existing directory only its
// owner can access.
func checkPrivateDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("writing private file: directory %s: %w; create it with mode 0700 first", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("writing private file: %s is not a directory", dir)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("writing private file: directory %s has mode %04o, so group or others can access it; it must be private: run `chmod 700 %s`", dir, perm, dir)
	}
	return nil
}

// clearPrivatePath wipes an existing file at path rather than truncating
// it, so its old bytes do not linger; a symbolic link is refused rather
// than followed.
func clearPrivatePath(path string) error {
	lst, err := os.Lstat(path)
	if err != nil {
		return nil // nothing to clear; creating the file reports what else is wrong
	}
	if lst.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("writing private file %s: it is a symbolic link; refusing to follow it", path)
	}
	if err := Wipe(path); err != nil {
		return fmt.Errorf("writing private file: replacing existing: %w", err)
	}
	return nil
}
