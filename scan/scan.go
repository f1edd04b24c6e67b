package scan

import (
	"errors"
	"fmt"
	"github.com/switchtender/switchtender/exec"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

// Bounds on what Module reads, so a hostile configuration (a module that
// calls the same module twice, and so on 32 levels down) cannot keep it
// busy without end: past them modules are left unread (a finding). Which
// modules are cut at the bound can change from scan to scan.
const (
	// MaxDepth is the deepest module nesting read: a module call more
	// than this many levels below the root is left unread.
	MaxDepth = 32
	// MaxModules is the most module calls read, the root not counted.
	MaxModules = 10000
	// MaxFiles is the most configuration files read in all.
	MaxFiles = 100000
)

// Finding is one thing the scan found that makes a plan more than a read,
// or that it could not read.
type Finding struct {
	// Address is the full address of what was found:
	// "module.a.module.b.data.external.x"; for a module left unread, the
	// module's address ("module.a.module.b"); for a file that does not
	// parse, its module's address ("" for the root module: File names it).
	Address string
	// File is the slash path, relative to Options.Root, of the file the
	// finding is in ("TF_ENCRYPTION" for the environment variable); for a
	// module left unread, the file of its module block.
	File string
	// Line is the finding's 1-based line in File, 0 when unknown.
	Line int
	// Reason is one sentence for people: what was found and why it counts.
	Reason string
}

// Options says what Module scans.
type Options struct {
	// Root is the boundary: the configuration's checkout or its private
	// copy. Modules and files may not lead out of it (a finding).
	Root string
	// Dir is the root module's directory, inside Root.
	Dir string
	// Manifest is the modules.json that `tofu get` wrote for Dir (normally
	// Dir/.terraform/modules/modules.json in the gate's private copy); its
	// record directories are relative to Dir. "" means none: every module
	// that is not local is then left unread (a finding).
	Manifest string
	// Encryption is TF_ENCRYPTION in the run's environment, "" if unset.
	Encryption string
	// PullRequest makes every data "terraform_remote_state" a finding: a
	// branch's remote state backend gets the run's credentials (those a
	// backend reads from the environment, such as TF_HTTP_PASSWORD or
	// AWS_*), and the branch chose where it points. So is a root module's
	// backend block that names a credentials or cluster file that can run
	// a program (docs/scan-file-arguments.md): the block must match the
	// checkout's, but the file it names may be the branch's.
	PullRequest bool
}

// remoteStateInPullRequest is the finding's reason for a remote state a
// pull request's plan would read.
const remoteStateInPullRequest = "data \"terraform_remote_state\" in a pull request's plan: its backend gets the run's credentials from the environment, and the branch chooses where it points"

// Result is what Module found.
type Result struct {
	// Findings are sorted by Address, then File, then Line (then Reason).
	Findings []Finding
	// Digest is "sha256:<hex>" over the configuration files read (see
	// Digest); PlanDigest computes the same from a saved plan.
	Digest string
	// Modules is the number of modules read, the root module included.
	Modules int
	// Files is the number of configuration files read.
	Files int
	// Dirs are the directories of the modules read, the root module's
	// included: slash paths relative to Root ("." for Root), sorted. A
	// change under one of them changes what the plan runs.
	Dirs []string
}

// Module scans the root module at opts.Dir and every module it calls, as
// the spec section "What a plan runs, and what the gate reads" asks: each
// module's configuration files (ConfigFiles) are read for the blocks that
// act when a plan reads them (DataReason, EncryptionReason), and
// opts.Encryption is read as TF_ENCRYPTION. Local modules ("./", "../") are
// read from the caller's directory; any other is read only from the
// directory opts.Manifest records for it. Whatever cannot be read is a
// Finding and is left unread. The error is only for the caller's mistakes:
// Root or Dir missing, Dir outside Root, a Manifest that cannot be read.
func Module(opts Options) (*Result, error) {
	s, err := newScanner(opts)
	if err != nil {
		return nil, err
	}
	s.encryptionEnv(opts.Encryption)
	for range runtime.GOMAXPROCS(0) {
		go s.reader()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	s.walk(pending{dir: s.dir}, &wg)
	wg.Wait()
	close(s.jobs)
	if opts.PullRequest {
		s.findings = append(s.findings, s.remoteStates...)
		s.findings = append(s.findings, s.prBackends...)
	}
	sortFindings(s.findings)
	return &Result{
		Findings: s.findings,
		Digest:   Digest(s.read),
		Modules:  len(s.read),
		Files:    s.files,
		Dirs:     sortedDirs(s.dirs),
	}, nil
}

// scanner holds one scan's state.
type scanner struct {
	root     string // Root, absolute with symlinks resolved
	dir      string // Dir, likewise
	manifest map[string]manifestRecord
	packages []string     // directories under dir/.terraform/modules that the manifest installed
	jobs     chan fileJob // files for the readers to read
	mu       sync.Mutex   // guards what follows
	read     map[string]map[string][32]byte
	dirs     map[string]bool // the modules' directories, relative to root
	files    int             // configuration files read
	listed   int             // configuration files admitted for reading
	modules  int             // module calls admitted for reading
	report
}

func newScanner(opts Options) (*scanner, error) {
	root, err := realDir(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("scan root: %w", err)
	}
	dir, err := realDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("scan root module: %w", err)
	}
	if !within(root, dir) {
		return nil, fmt.Errorf("root module %s is outside %s", dir, root)
	}
	s := &scanner{root: root, dir: dir, read: map[string]map[string][32]byte{}, dirs: map[string]bool{},
		jobs: make(chan fileJob)}
	if opts.Manifest != "" {
		if s.manifest, err = readManifest(opts.Manifest); err != nil {
			return nil, err
		}
		s.packages = installedPackages(dir, s.manifest)
	}
	return s, nil
}

// realDir returns dir made absolute with its symlinks resolved, or an
// error when it is not a directory.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New(real + " is not a directory")
	}
	return real, nil
}

// within reports whether path is dir or below it (exec.Inside).
var within = exec.Inside

// rel returns path relative to the scan root, with slashes.
func (s *scanner) rel(path string) string {
	return relTo(s.root, path)
}

// relTo returns path relative to root, with slashes.
func relTo(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Reason < b.Reason
	})
}

// sortedDirs is the set dirs as a sorted list.
func sortedDirs(dirs map[string]bool) []string {
	out := make([]string, 0, len(dirs))
	for d := range dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
