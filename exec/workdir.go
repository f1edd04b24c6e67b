package exec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ResolveWorkingDir returns the absolute, symlink-free path of the run's
// working directory: command, a path relative to the project checkout
// (spec "How values reach the configuration": the command directory cannot
// escape the project with .., so a run stays inside its checkout; DESIGN.md
// invariant 4).
//
// It refuses, with an error saying what was wrong, an empty command, an
// absolute path, any ".." element, a path through a symlink that resolves
// outside the checkout (checked at every element, not only the last, so a
// path may not even pass through the outside), a missing path and one that
// is not a directory. Symlinks that stay inside the checkout are followed.
// "." names the checkout itself. The checkout must exist; it is resolved
// through its own symlinks first.
//
// The check is made before any process starts; a checkout that an attacker
// can rewrite between the check and the run is outside this guarantee.
func ResolveWorkingDir(checkout, command string) (string, error) {
	if err := CheckCommand(command); err != nil {
		return "", fmt.Errorf("resolving working directory: %w", err)
	}
	elems := strings.Split(filepath.ToSlash(command), "/")
	abs, err := filepath.Abs(checkout)
	if err != nil {
		return "", fmt.Errorf("resolving project checkout %q: %w", checkout, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolving project checkout %q: %w", checkout, err)
	}
	if fi, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("resolving project checkout %q: %w", checkout, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("resolving project checkout %q: not a directory", checkout)
	}
	cur, err := walk(abs, root, command, elems)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(cur)
	if err != nil {
		return "", fmt.Errorf("resolving working directory %q: %w", command, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("resolving working directory: %q in the project checkout is not a directory", command)
	}
	return cur, nil
}

// CheckCommand is the lexical half of the containment check, which the
// configuration applies when it loads and ResolveWorkingDir before every
// run: command must be a non-empty path relative to the checkout, with no
// ".." element (with / or \ as the separator), no NUL byte, and not absolute
// (nor a drive or UNC path). The error says what was wrong and what to do.
func CheckCommand(command string) error {
	switch {
	case strings.TrimSpace(command) == "":
		return errors.New("the command is empty; name a directory relative to the project checkout, such as infra/network, or \".\" for the checkout itself")
	case strings.ContainsRune(command, 0):
		return fmt.Errorf("command %q contains a NUL byte", command)
	case filepath.IsAbs(command) || strings.HasPrefix(command, "/") || strings.HasPrefix(command, `\`) || (len(command) > 1 && command[1] == ':'):
		return fmt.Errorf("command %q is absolute; name a directory relative to the project checkout, such as infra/network", command)
	}
	for _, e := range strings.FieldsFunc(command, func(r rune) bool { return r == '/' || r == '\\' }) {
		if e == ".." {
			return fmt.Errorf("command %q contains \"..\"; a run's directory must stay inside its project checkout", command)
		}
	}
	return nil
}

// maxHops bounds the symlinks followed, as the kernel's ELOOP limit does.
const maxHops = 40

// walk resolves elems below root one element at a time, following each
// symlink hop by hop, and refuses any hop that leaves the checkout: an
// absolute target outside it (lexically), or a ".." above it. So a path
// through the outside is refused even when it would come back in. given is
// the checkout as the caller named it (absolute, unresolved), which absolute
// targets may also use.
func walk(given, root, command string, elems []string) (string, error) {
	type elem struct {
		name      string
		ofCommand bool // an element of the command, not of a symlink's target
	}
	var queue []elem
	for _, e := range elems {
		queue = append(queue, elem{e, true})
	}
	cur := root
	walked := "" // the command's elements consumed so far, for messages
	hops := 0
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if e.ofCommand {
			walked = path.Join(walked, e.name)
		}
		switch e.name {
		case "", ".":
			continue
		case "..": // only from a symlink's target; the command's own are refused earlier
			cur = filepath.Dir(cur)
			if !Inside(root, cur) {
				return "", fmt.Errorf("resolving working directory: %q leads through a symlink outside the project checkout %s; a run's directory must stay inside its checkout", walked, root)
			}
			continue
		}
		next := filepath.Join(cur, e.name)
		fi, err := os.Lstat(next)
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("resolving working directory: %q does not exist in the project checkout %s", walked, root)
		}
		if err != nil {
			return "", fmt.Errorf("resolving working directory %q: %w", command, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxHops {
			return "", fmt.Errorf("resolving working directory %q: too many levels of symlinks", command)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolving working directory %q: %w", command, err)
		}
		if filepath.IsAbs(target) {
			if target, err = insideTarget(given, root, walked, target); err != nil {
				return "", err
			}
			cur = root
		}
		var prefix []elem
		for _, n := range strings.Split(filepath.ToSlash(target), "/") {
			prefix = append(prefix, elem{n, false})
		}
		queue = append(prefix, queue...)
	}
	return cur, nil
}

// Inside reports whether path is root or below it; both absolute, clean and
// (where it matters) with symlinks resolved. It is the one containment test
// for working directories, the scan's module paths and pull requests' trees.
func Inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// insideTarget returns the absolute symlink target (reached as walked) as a
// path relative to the checkout root, which given also names; a target
// outside the checkout is refused.
func insideTarget(given, root, walked, target string) (string, error) {
	t := filepath.Clean(target)
	var rel string
	switch {
	case Inside(root, t):
		rel, _ = filepath.Rel(root, t)
	case Inside(given, t):
		rel, _ = filepath.Rel(given, t)
	default:
		return "", fmt.Errorf("resolving working directory: %q is a symlink to %s, outside the project checkout %s; a run's directory must stay inside its checkout", walked, target, root)
	}
	return rel, nil
}
