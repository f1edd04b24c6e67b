package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// call is a module block as the calling module's files declare it, after
// override files have replaced its source.
type call struct {
	name      string
	hasSource bool    // the block has a source argument
	lit       literal // what the source is: a plain string, or not
	source    string  // the source when lit is literalString
	file      string  // slash path relative to the root of the block's file
	line      int
}

// module reads the module at the call path in the directory dir (absolute,
// symlinks resolved), then the modules it calls. stack holds the
// directories of its callers, to refuse a cycle.
func (s *scanner) module(path []string, dir string, callFile string, callLine int, stack []string) {
	addr := ModuleAddress(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.find(addr, callFile, callLine, fmt.Sprintf("module directory %s could not be read (%v); left unread", s.rel(dir), err))
		return
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	key := ModuleKey(path)
	s.read[key] = map[string][32]byte{}
	calls := map[string]call{}
	files := ConfigFiles(names)
	results := make([]*fileResult, len(files))
	parallel(len(files), func(i int) { results[i] = readFile(s.root, path, dir, files[i]) })
	for i, r := range results {
		s.findings = append(s.findings, r.findings...)
		if r.read {
			s.read[key][files[i]] = r.sum
			s.files++
		}
	}
	// Primary files first, then override files, whose module blocks
	// replace the source of a call of the same name (OpenTofu's
	// ModuleCall.merge in internal/configs/module_merge.go).
	for _, override := range []bool{false, true} {
		for i, name := range files {
			if isOverrideFile(name) != override {
				continue
			}
			for _, c := range results[i].calls {
				prev, dup := calls[c.name]
				if dup && override && !c.hasSource {
					continue // the source stays the primary block's
				}
				if dup && !override {
					s.find(Address(path, "module."+c.name), c.file, c.line,
						fmt.Sprintf("module %q is declared twice (first at %s:%d); only the first is read", c.name, prev.file, prev.line))
					continue
				}
				calls[c.name] = c
			}
		}
	}
	order := make([]string, 0, len(calls))
	for n := range calls {
		order = append(order, n)
	}
	sort.Strings(order)
	for _, n := range order {
		s.child(path, dir, calls[n], append(stack, dir))
	}
}

// child reads the module a call in the module at path (in dir) names, or
// records why it is left unread.
func (s *scanner) child(path []string, dir string, c call, stack []string) {
	childPath := append(path[:len(path):len(path)], c.name)
	addr := ModuleAddress(childPath)
	unread := func(format string, args ...any) {
		s.find(addr, c.file, c.line, fmt.Sprintf(format, args...)+"; left unread")
	}
	if len(childPath) > MaxDepth {
		unread("module nesting is deeper than %d", MaxDepth)
		return
	}
	if !c.hasSource {
		unread("module block has no source")
		return
	}
	if c.lit != literalString {
		unread("module source is not a plain string: OpenTofu evaluates it at init, from a variable or expression")
		return
	}
	var target string
	if local, ok := localSource(c.source); ok {
		target = filepath.Join(dir, filepath.FromSlash(local))
	} else {
		rec, ok := s.manifest[ModuleKey(childPath)]
		if !ok {
			unread("module source %q could not be downloaded (no entry in the manifest of the gate's tofu get)", c.source)
			return
		}
		target = rec.Dir
		if !filepath.IsAbs(target) {
			target = filepath.Join(s.dir, target)
		}
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		unread("module directory %s does not exist or cannot be read", s.rel(target))
		return
	}
	switch {
	case !within(s.root, real):
		unread("module directory %s leads outside the configuration's root", s.rel(target))
	case !s.installedOrOwn(real):
		unread("module directory %s is inside a .terraform directory the gate's tofu get did not install", s.rel(real))
	case slices.Contains(stack, real):
		unread("module %s calls a module that contains it (a cycle)", s.rel(real))
	default:
		s.module(childPath, real, c.file, c.line, stack)
	}
}

// installedOrOwn reports whether the module directory dir (real, inside the
// root) may be read: it lies in no .terraform directory, or inside a package
// the manifest's tofu get installed. A .terraform committed to the checkout
// or left in a working directory is never read.
func (s *scanner) installedOrOwn(dir string) bool {
	for _, p := range s.packages {
		if within(p, dir) {
			return true
		}
	}
	for d := s.rel(dir); d != "." && d != "/" && d != ""; d = filepath.Dir(d) {
		if filepath.Base(d) == ".terraform" {
			return false
		}
	}
	return true
}

// parallel calls f(0) to f(n-1), on up to GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
