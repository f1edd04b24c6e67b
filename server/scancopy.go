package server

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// configSuffixes are the file names the scan's copy keeps: the files
// OpenTofu reads as configuration (package scan chooses among them).
var configSuffixes = []string{".tf", ".tf.json", ".tofu", ".tofu.json"}

// copyConfiguration copies the configuration files under root into dest
// for the scan: directories, configuration files and symbolic links (as
// links: package scan does not follow one out of the copy). .git and every
// .terraform are left out, so the get installs into a fresh one and nothing
// a checkout committed or left behind is read; so are dest itself and the
// directories in skip (the data directory, when it lies in the checkout).
func copyConfiguration(root, dest string, skip ...string) error {
	skip = append(skip, dest)
	for i, s := range skip {
		if real, err := filepath.EvalSymlinks(s); err == nil {
			skip[i] = real
		}
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dest, rel)
		switch {
		case d.IsDir() && slices.Contains(skip, p):
			return filepath.SkipDir
		case rel != "." && (d.Name() == ".git" || d.Name() == ".terraform"):
			// Whatever it is (a directory, a link out of the checkout), the
			// copy has none: the get installs into a fresh one.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
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
		case isConfigName(d.Name()):
			return copyFile(p, target)
		}
		return nil
	})
}

func isConfigName(name string) bool {
	for _, s := range configSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// copyTree copies the tree at src (directories, regular files, symbolic
// links as links) to dest, which must not exist yet.
func copyTree(src, dest string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dest, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target)
		}
		return fmt.Errorf("%s is neither a file, a directory nor a link; not copied", p)
	})
}

// copyFile copies the regular file src to a new file dest (never through a
// link), keeping its executable bits.
func copyFile(src, dest string) error {
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
