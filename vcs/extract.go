package vcs

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// extract writes the tar stream r into dest: directories, regular files and
// symbolic links; any other entry (a device, a FIFO, a hard link) and any
// path that is absolute or climbs out with .. is an error. It writes at most
// MaxExportBytes of file content.
func extract(r io.Reader, dest string) error {
	tr := tar.NewReader(r)
	var written int64
	links := map[string]bool{} // symbolic links written: nothing is written through one
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name := path.Clean(h.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("the archive names %q, outside the tree", h.Name)
		}
		if under(name, links) {
			return fmt.Errorf("the archive names %q, under a symbolic link it wrote", h.Name)
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o700)
		case tar.TypeReg:
			if written += h.Size; written > MaxExportBytes {
				return fmt.Errorf("the tree holds more than %d bytes; not exported", MaxExportBytes)
			}
			err = writeFile(target, tr, h.FileInfo().Mode().Perm())
		case tar.TypeSymlink:
			links[name] = true
			err = os.Symlink(h.Linkname, target)
		default:
			return fmt.Errorf("the archive holds %q of a kind a tree does not (tar type %q)", h.Name, h.Typeflag)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
}

// writeFile creates path (never through an existing link) with r's content.
func writeFile(path string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&0o700|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// under reports whether name is one of links or lies beneath one.
func under(name string, links map[string]bool) bool {
	for p := name; p != "." && p != "/"; p = path.Dir(p) {
		if links[p] {
			return true
		}
	}
	return false
}
