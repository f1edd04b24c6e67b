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

// pending is a module to read: its call path, its directory (absolute,
// symlinks resolved), where it is called from, and the directories of its
// callers, to refuse a cycle.
type pending struct {
	path     []string
	dir      string
	callFile string
	callLine int
	stack    []string
}

// job is one configuration file of a pending module.
type job struct {
	mod  int // index in the level
	name string
	link bool // the file is a symlink
}

// walk reads the modules from the root down, a level of the module tree at
// a time: the files of every module of a level are read in parallel, then
// their module calls make the next level.
func (s *scanner) walk(root pending) {
	level := []pending{root}
	for len(level) > 0 {
		var jobs []job
		for i, m := range level {
			names, links := s.moduleFiles(m)
			for _, name := range names {
				jobs = append(jobs, job{i, name, links[name]})
			}
		}
		results := make([]*fileResult, len(jobs))
		parallel(len(jobs), func(i int) {
			m := level[jobs[i].mod]
			results[i] = readFile(s.root, m.path, m.dir, jobs[i].name, jobs[i].link)
		})
		var next []pending
		for i, m := range level {
			var files []string
			var res []*fileResult
			for j, jb := range jobs {
				if jb.mod == i {
					files, res = append(files, jb.name), append(res, results[j])
				}
			}
			next = append(next, s.module(m, files, res)...)
		}
		level = next
	}
}

// moduleFiles lists the configuration files of the module m, and which of
// its entries are symlinks, and records the module as read; a directory it
// cannot list is a finding. A directory is never a configuration file,
// but a symlink to one is (and fails to read), as in OpenTofu.
func (s *scanner) moduleFiles(m pending) ([]string, map[string]bool) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		s.find(ModuleAddress(m.path), m.callFile, m.callLine, fmt.Sprintf("module directory %s could not be read (%v); left unread", s.rel(m.dir), err))
		return nil, nil
	}
	var names []string
	links := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
		if e.Type()&os.ModeSymlink != 0 {
			links[e.Name()] = true
		}
	}
	s.read[ModuleKey(m.path)] = map[string][32]byte{}
	return ConfigFiles(names), links
}

// module takes in what was read of the files of module m and returns the
// modules it calls that are to be read.
func (s *scanner) module(m pending, files []string, results []*fileResult) []pending {
	key := ModuleKey(m.path)
	for i, r := range results {
		s.findings = append(s.findings, r.findings...)
		if r.read {
			s.read[key][files[i]] = r.sum
			s.files++
		}
	}
	calls := s.calls(m.path, files, results)
	order := make([]string, 0, len(calls))
	for n := range calls {
		order = append(order, n)
	}
	sort.Strings(order)
	var next []pending
	stack := append(m.stack[:len(m.stack):len(m.stack)], m.dir)
	for _, n := range order {
		if p, ok := s.child(m.path, m.dir, calls[n], stack); ok {
			next = append(next, p)
		}
	}
	return next
}

// calls merges the module blocks of a module's files: primary files first,
// then override files, whose module blocks replace the source of a call of
// the same name (OpenTofu's ModuleCall.merge in
// internal/configs/module_merge.go).
func (s *scanner) calls(path []string, files []string, results []*fileResult) map[string]call {
	calls := map[string]call{}
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
	return calls
}

// child returns the module a call in the module at path (in dir) names,
// or records why it is left unread and returns false.
func (s *scanner) child(path []string, dir string, c call, stack []string) (pending, bool) {
	childPath := append(path[:len(path):len(path)], c.name)
	real, why := s.childDir(childPath, dir, c, stack)
	if why != "" {
		s.find(ModuleAddress(childPath), c.file, c.line, why+"; left unread")
		return pending{}, false
	}
	return pending{path: childPath, dir: real, callFile: c.file, callLine: c.line, stack: stack}, true
}

// childDir returns the directory (symlinks resolved) of the module at
// childPath that call c in dir names, or why it is not read.
func (s *scanner) childDir(childPath []string, dir string, c call, stack []string) (string, string) {
	switch {
	case len(childPath) > MaxDepth:
		return "", fmt.Sprintf("module nesting is deeper than %d", MaxDepth)
	case !c.hasSource:
		return "", "module block has no source"
	case c.lit != literalString:
		return "", "module source is not a plain string: OpenTofu evaluates it at init, from a variable or expression"
	}
	var target string
	if local, ok := localSource(c.source); ok {
		target = filepath.Join(dir, filepath.FromSlash(local))
	} else {
		rec, ok := s.manifest[ModuleKey(childPath)]
		if !ok {
			return "", fmt.Sprintf("module source %q could not be downloaded (no entry in the manifest of the gate's tofu get)", c.source)
		}
		target = rec.Dir
		if !filepath.IsAbs(target) {
			target = filepath.Join(s.dir, target)
		}
	}
	real, err := filepath.EvalSymlinks(target)
	switch {
	case err != nil:
		return "", fmt.Sprintf("module directory %s does not exist or cannot be read", s.rel(target))
	case !within(s.root, real):
		return "", fmt.Sprintf("module directory %s leads outside the configuration's root", s.rel(target))
	case !s.installedOrOwn(real):
		return "", fmt.Sprintf("module directory %s is inside a .terraform directory the gate's tofu get did not install", s.rel(real))
	case slices.Contains(stack, real):
		return "", fmt.Sprintf("module %s calls a module that contains it (a cycle)", s.rel(real))
	}
	return real, ""
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
