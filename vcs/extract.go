package vcs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// entry is one blob of a commit's tree: its mode, object and path.
type entry struct {
	mode, object, path string
}

// parseTree reads `git ls-tree -r -z` output: "MODE TYPE OBJECT\tPATH\0".
// Submodules (commits) are left out; a path that is absolute or climbs out
// with .. is an error.
func parseTree(out []byte) ([]entry, error) {
	var entries []entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("unexpected ls-tree line %q", rec)
		}
		if f[1] == "commit" {
			continue
		}
		name := path.Clean(p)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || name == "." {
			return nil, fmt.Errorf("the tree names %q, outside it", p)
		}
		entries = append(entries, entry{mode: f[0], object: f[2], path: name})
	}
	return entries, nil
}

// writeBlobs reads every entry's blob with one `git cat-file --batch` and
// writes it under dest: a file (0600, or 0700 when executable) or a
// symbolic link (mode 120000). Nothing is written through a link written
// before, and at most MaxExportBytes of content.
func writeBlobs(ctx context.Context, dir string, entries []entry, dest string) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "git", "-C", dir, "cat-file", "--batch")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var objects bytes.Buffer
	for _, e := range entries {
		objects.WriteString(e.object + "\n")
	}
	cmd.Stdin = &objects
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting git cat-file: %w", err)
	}
	werr := writeEntries(bufio.NewReader(out), entries, dest)
	if werr != nil {
		cancel()
	}
	if err := cmd.Wait(); werr == nil && err != nil {
		return fmt.Errorf("git cat-file: %s", strings.TrimSpace(stderr.String()+" "+err.Error()))
	}
	return werr
}

// writeEntries writes each entry from the cat-file --batch stream r.
func writeEntries(r *bufio.Reader, entries []entry, dest string) error {
	links := map[string]bool{} // symbolic links written: nothing is written through one
	var written int64
	for _, e := range entries {
		size, err := batchHeader(r, e.object)
		if err != nil {
			return err
		}
		if written += size; written > MaxExportBytes {
			return fmt.Errorf("the tree holds more than %d bytes; not exported", MaxExportBytes)
		}
		if under(e.path, links) {
			return fmt.Errorf("the tree names %q under a symbolic link it holds", e.path)
		}
		body := io.LimitReader(r, size)
		if err := writeEntry(e, body, dest, links); err != nil {
			return fmt.Errorf("writing %s: %w", e.path, err)
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return err
		}
		if _, err := r.Discard(1); err != nil { // the newline after each object
			return err
		}
	}
	return nil
}

// batchHeader reads "OBJECT blob SIZE\n" and returns SIZE.
func batchHeader(r *bufio.Reader, object string) (int64, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("reading object %s: %w", object, err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != object || f[1] != "blob" {
		return 0, fmt.Errorf("object %s: unexpected %q", object, strings.TrimSpace(line))
	}
	return strconv.ParseInt(f[2], 10, 64)
}

// writeEntry writes one entry's content from body under dest.
func writeEntry(e entry, body io.Reader, dest string, links map[string]bool) error {
	target := filepath.Join(dest, filepath.FromSlash(e.path))
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	switch e.mode {
	case "120000":
		b, err := io.ReadAll(io.LimitReader(body, 4096))
		if err != nil {
			return err
		}
		links[e.path] = true
		return os.Symlink(string(b), target)
	case "100755":
		return writeFile(target, body, 0o700)
	case "100644", "100664":
		return writeFile(target, body, 0o600)
	}
	return errors.New("mode " + e.mode + " is not a file or link")
}

// under reports whether name lies beneath one of links.
func under(name string, links map[string]bool) bool {
	for p := path.Dir(name); p != "." && p != "/"; p = path.Dir(p) {
		if links[p] {
			return true
		}
	}
	return links[name]
}

// writeFile creates path (never through an existing link) with r's content.
func writeFile(path string, r io.Reader, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
