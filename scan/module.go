package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
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

// fileJob is a configuration file for a reader to read.
type fileJob struct {
	m    *pending
	name string
	link bool
	out  **fileResult
	done *sync.WaitGroup
}

// reader reads the files of jobs until the channel is closed. Module runs
// GOMAXPROCS of them: long-lived goroutines keep the deep stacks parsing
// grows, where a goroutine a file would grow one each time.
func (s *scanner) reader() {
	for j := range s.jobs {
		*j.out = s.readJob(j)
		j.done.Done()
	}
}

// readJob reads a job's file. A panic in the parser on hostile input is a
// finding for the file, not the end of the process.
func (s *scanner) readJob(j fileJob) (out *fileResult) {
	defer func() {
		if p := recover(); p != nil {
			out = &fileResult{}
			out.find(ModuleAddress(j.m.path), relTo(s.root, filepath.Join(j.m.dir, j.name)), 0,
				fmt.Sprintf("configuration file could not be read: the parser failed (%v); left unread", p))
		}
	}()
	return readFile(s.root, j.m.path, j.m.dir, j.name, j.link)
}

// walk reads the module m and, concurrently, every module it calls, then
// calls wg.Done. Its files are read by the readers, in parallel with each
// other and with other modules' files; the scanner's state is changed only
// under s.mu.
func (s *scanner) walk(m pending, wg *sync.WaitGroup) {
	defer wg.Done()
	names, links, err := moduleFiles(m.dir)
	if !s.admitFiles(m, len(names), err) {
		return
	}
	results := make([]*fileResult, len(names))
	var files sync.WaitGroup
	files.Add(len(names))
	for i, name := range names {
		s.jobs <- fileJob{m: &m, name: name, link: links[name], out: &results[i], done: &files}
	}
	files.Wait()
	s.mu.Lock()
	next := s.module(m, names, results)
	s.mu.Unlock()
	for _, p := range next {
		wg.Add(1)
		go s.walk(p, wg)
	}
}

// admitFiles records the module m for reading n files, or, when its
// directory could not be listed (err) or n would take the files read past
// MaxFiles, records it as unread and returns false.
func (s *scanner) admitFiles(m pending, n int, err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	file := m.callFile
	if file == "" {
		file = s.rel(m.dir)
	}
	switch {
	case err != nil:
		s.find(ModuleAddress(m.path), file, m.callLine, fmt.Sprintf("module directory %s could not be read (%v); left unread", s.rel(m.dir), err))
		return false
	case s.listed+n > MaxFiles:
		s.find(ModuleAddress(m.path), file, m.callLine, fmt.Sprintf("module has %d configuration files, which would take the scan past the %d it reads; left unread", n, MaxFiles))
		return false
	}
	s.listed += n
	return true
}

// moduleFiles lists the configuration files in the module directory dir,
// and which of its entries are symlinks. A directory is never a
// configuration file, but a symlink to one is (and fails to read), as in
// OpenTofu.
func moduleFiles(dir string) ([]string, map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
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
	return ConfigFiles(names), links, nil
}

// module takes in what was read of the files of module m and returns the
// modules it calls that are to be read.
func (s *scanner) module(m pending, files []string, results []*fileResult) []pending {
	key := ModuleKey(m.path)
	s.read[key] = map[string][32]byte{}
	s.dirs[s.rel(m.dir)] = true
	for i, r := range results {
		s.findings = append(s.findings, r.findings...)
		s.remoteStates = append(s.remoteStates, r.remoteStates...)
		s.prBackends = append(s.prBackends, r.prBackends...)
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
	case s.modules >= MaxModules:
		return "", fmt.Sprintf("the configuration calls more than %d modules", MaxModules)
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
	case !s.manifestAgrees(childPath, real):
		return "", fmt.Sprintf("the module manifest records another directory for local module %s than its source names (%s); OpenTofu would load the manifest's", c.source, s.rel(real))
	case !within(s.root, real):
		return "", fmt.Sprintf("module directory %s leads outside the configuration's root", s.rel(target))
	case !s.installedOrOwn(real):
		return "", fmt.Sprintf("module directory %s is inside a .terraform directory the gate's tofu get did not install", s.rel(real))
	case slices.Contains(stack, real):
		return "", fmt.Sprintf("module %s calls a module that contains it (a cycle)", s.rel(real))
	}
	s.modules++
	return real, ""
}

// manifestAgrees reports whether the manifest, when there is one, records
// the local module at childPath in real (symlinks resolved): OpenTofu loads
// a module from the directory its manifest records, so a manifest changed
// after the get must not lead it elsewhere than the scan read. A module
// the manifest does not record is not loaded at all (init fails), so it
// agrees.
func (s *scanner) manifestAgrees(childPath []string, real string) bool {
	rec, ok := s.manifest[ModuleKey(childPath)]
	if s.manifest == nil || !ok {
		return true
	}
	dir := rec.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.dir, dir)
	}
	got, err := filepath.EvalSymlinks(dir)
	return err == nil && got == real
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
