package scan

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/switchtender/switchtender/gate"
)

// LockFileName is the dependency lock file OpenTofu reads in the working
// directory, and stores in a saved plan under the same name
// (internal/plans/planfile/writer.go).
const LockFileName = ".terraform.lock.hcl"

// Identity is what, in a working directory, decides what OpenTofu runs
// when it starts there besides a saved plan's own configuration snapshot:
// the root module's configuration files as OpenTofu loads them
// (ConfigFiles: primary and override files, x.tofu shadowing x.tf), where
// the backend, cloud and encryption blocks live, each by name with its
// sha256; and what the dependency lock file locks, which pins the
// providers OpenTofu may start. The lock file is compared by what it locks
// (each provider's version, constraints and hashes), not by its bytes: a
// saved plan stores it as OpenTofu writes it again, not as the file was. A saved plan embeds both (PlanIdentity);
// DirIdentity reads them from a directory, and Diff says what differs.
type Identity struct {
	Files map[string][32]byte // root module configuration files by base name
	Lock  string              // what the dependency lock file locks (lockedProviders); "" when nothing
	// StartFiles are the other files under the directory an OpenTofu process
	// may read when it starts (InputFiles): the variable files it loads by
	// itself, and any file a static expression of the encryption or backend
	// block reads with file() or templatefile(). Every process, a saved
	// plan's apply included, evaluates those blocks from the directory, and
	// the plan does not store them: DirIdentity reads them, PlanIdentity
	// leaves them nil, and Diff compares them only when the Identity that
	// was weighed has them (non-nil), as recorded when the plan was made
	// (StartFileSums).
	StartFiles map[string][32]byte
}

// StartFileSums is StartFiles as recorded with a proposal: name to the
// sha256's hex; never nil, so an Identity built from it compares.
func (id Identity) StartFileSums() map[string]string {
	out := map[string]string{}
	for n, sum := range id.StartFiles {
		out[n] = hex.EncodeToString(sum[:])
	}
	return out
}

// WithStartFiles is id comparing the files under the directory recorded as sums
// (StartFileSums' form; nil stands for none, so it still compares); a sum
// that is not 64 hex digits is an error.
func (id Identity) WithStartFiles(sums map[string]string) (Identity, error) {
	id.StartFiles = map[string][32]byte{}
	for n, h := range sums {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 32 {
			return Identity{}, fmt.Errorf("the recorded sha256 of %s is not 64 hex digits", n)
		}
		id.StartFiles[n] = [32]byte(b)
	}
	return id, nil
}

// PlanIdentity reads the Identity a saved plan (the plan file's bytes)
// was made with: its snapshot's root module files (tfconfig/m-/NAME, as
// ConfigFiles selects them) and its .terraform.lock.hcl entry. A plan that
// is not a zip archive, has no configuration snapshot or holds an entry
// over gate.MaxConfigFileSize is an error.
func PlanIdentity(plan []byte) (Identity, error) {
	z, err := zip.NewReader(bytes.NewReader(plan), int64(len(plan)))
	if err != nil {
		return Identity{}, fmt.Errorf("reading the saved plan: %w", err)
	}
	id := Identity{Files: map[string][32]byte{}}
	found := false
	for _, f := range z.File {
		switch {
		case f.Name == snapshotManifest:
			found = true
		case f.Name == LockFileName:
			src, err := readZipFile(f, gate.MaxConfigFileSize)
			if err != nil {
				return Identity{}, err
			}
			if id.Lock, err = lockedProviders(src); err != nil {
				return Identity{}, fmt.Errorf("reading the saved plan's %s: %w", LockFileName, err)
			}
		case strings.HasPrefix(f.Name, snapshotModulePrefix+"/"):
			name := strings.TrimPrefix(f.Name, snapshotModulePrefix+"/")
			if name == "" || strings.Contains(name, "/") {
				continue // OpenTofu reads only a module's own files back
			}
			src, err := readZipFile(f, gate.MaxConfigFileSize)
			if err != nil {
				return Identity{}, err
			}
			id.Files[name] = sha256.Sum256(src)
		}
	}
	if !found {
		return Identity{}, errors.New("the saved plan has no configuration snapshot (" + snapshotManifest + ")")
	}
	id.Files = selectConfig(id.Files)
	return id, nil
}

// DirIdentity reads dir's Identity as OpenTofu would read it there: the
// configuration files of the directory itself (a symbolic link is
// followed, as OpenTofu follows it) and its dependency lock file. A file
// OpenTofu would read that is not a regular file, or is larger than
// gate.MaxConfigFileSize, is an error naming it.
func DirIdentity(dir string) (Identity, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Identity{}, fmt.Errorf("reading the working directory: %w", err)
	}
	id := Identity{Files: map[string][32]byte{}}
	if id.StartFiles, err = InputFiles(dir); err != nil {
		return Identity{}, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || (name != LockFileName && configExt(name) == "") {
			continue
		}
		src, err := readRegular(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist) && e.Type()&os.ModeSymlink != 0:
			continue // a link to nothing: OpenTofu reads no such file either
		case err != nil:
			return Identity{}, err
		case name == LockFileName:
			if id.Lock, err = lockedProviders(src); err != nil {
				return Identity{}, fmt.Errorf("reading %s: %w", LockFileName, err)
			}
		default:
			id.Files[name] = sha256.Sum256(src)
		}
	}
	id.Files = selectConfig(id.Files)
	return id, nil
}

// readRegular reads the regular file at path (a link followed) of at most
// gate.MaxConfigFileSize bytes; anything else is an error naming it.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s), and OpenTofu would read it", filepath.Base(path), fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, gate.MaxConfigFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Base(path), err)
	}
	if len(src) > gate.MaxConfigFileSize {
		return nil, fmt.Errorf("%s is over %d bytes", filepath.Base(path), gate.MaxConfigFileSize)
	}
	return src, nil
}

// lockedProviders is what a dependency lock file locks, in one canonical
// line per provider block, sorted: its address and each attribute
// (version, constraints, hashes) as JSON. "" when it locks nothing. A file
// that does not parse, or whose attributes are not literal values, is an
// error: OpenTofu would refuse it too.
func lockedProviders(src []byte) (string, error) {
	f, diags := hclsyntax.ParseConfig(src, LockFileName, hcl.InitialPos)
	if diags.HasErrors() {
		return "", diags
	}
	content, diags := f.Body.Content(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "provider", LabelNames: []string{"address"}}}})
	if diags.HasErrors() {
		return "", diags
	}
	var lines []string
	for _, b := range content.Blocks {
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			return "", diags
		}
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Strings(names)
		line := strconv.Quote(b.Labels[0])
		for _, n := range names {
			v, diags := attrs[n].Expr.Value(nil)
			if diags.HasErrors() {
				return "", diags
			}
			js, err := ctyjson.Marshal(v, v.Type())
			if err != nil {
				return "", fmt.Errorf("provider %s: %s: %w", b.Labels[0], n, err)
			}
			line += " " + n + "=" + string(js)
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}

// selectConfig keeps of files those ConfigFiles selects.
func selectConfig(files map[string][32]byte) map[string][32]byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	out := map[string][32]byte{}
	for _, n := range ConfigFiles(names) {
		out[n] = files[n]
	}
	return out
}

// Diff lists how got differs from want (the Identity that was weighed):
// "main.tf changed", "x_override.tf is new", "x.tf is no longer read
// (...)", sorted, then ".terraform.lock.hcl changed (...)" when the lock
// file locks anything else. None when they are the same.
func (want Identity) Diff(got Identity) []string {
	var out []string
	for n, sum := range want.Files {
		g, ok := got.Files[n]
		switch {
		case !ok:
			out = append(out, n+" is no longer read (removed, or shadowed by a .tofu file)")
		case g != sum:
			out = append(out, n+" changed")
		}
	}
	for n := range got.Files {
		if _, ok := want.Files[n]; !ok {
			out = append(out, n+" is new")
		}
	}
	if want.StartFiles != nil {
		out = append(out, diffStartFiles(want.StartFiles, got.StartFiles)...)
	}
	sort.Strings(out)
	if want.Lock != got.Lock {
		out = append(out, LockFileName+" changed (it locks other providers, versions or hashes than when the plan was made)")
	}
	return out
}

// diffStartFiles lists how the files under the directory got differ from want's:
// "x.auto.tfvars is new (OpenTofu loads its values by itself)", "x
// changed", "x is gone".
func diffStartFiles(want, got map[string][32]byte) []string {
	var out []string
	for n, sum := range want {
		g, ok := got[n]
		switch {
		case !ok:
			out = append(out, n+" is gone")
		case g != sum:
			out = append(out, n+" changed")
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			out = append(out, n+" is new")
		}
	}
	return out
}

// InputFiles are the files under dir, other than its own configuration
// files and lock file (compared as Files and Lock), that an OpenTofu
// process started there may read before it plans or applies anything: the
// variable files it loads by itself (terraform.tfvars, *.auto.tfvars and their .json forms) and whatever the
// encryption or backend block reads with file() or templatefile(), which
// may be any path below dir, and the workspace selected in
// .terraform/environment (terraform.workspace). So every regular file under
// dir is kept by its path relative to dir and sha256, and every symbolic
// link by its target; left out are .git and .terraform (at any depth; of
// dir's own only environment is kept), local state, its backup and lock,
// and terraform.tfstate.d, which init and the apply write.
func InputFiles(dir string) (map[string][32]byte, error) {
	w := inputWalk{dir: dir, out: map[string][32]byte{}}
	// The trailing separator walks a directory named through a link
	// (/proc/self/fd/N) as the directory it names.
	if err := filepath.WalkDir(dir+string(filepath.Separator), w.visit); err != nil {
		return nil, fmt.Errorf("reading the files under the working directory: %w", err)
	}
	return w.out, nil
}

// inputWalk gathers InputFiles of dir into out.
type inputWalk struct {
	dir string
	out map[string][32]byte
}

// visit is the filepath.WalkDir function of InputFiles.
func (w inputWalk) visit(p string, d os.DirEntry, err error) error {
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(w.dir, p)
	if err != nil || rel == "." {
		return err
	}
	name := d.Name()
	switch {
	case rel == ".terraform" && d.IsDir():
		return w.addEnvironment(p, rel)
	case leftOutEntry(rel, name, d):
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	case d.IsDir():
		return nil
	case d.Type()&os.ModeSymlink != 0:
		link, err := os.Readlink(p)
		if err != nil {
			return err
		}
		w.out[rel] = sha256.Sum256([]byte("symbolic link to " + link))
	case keptFile(rel, name, d):
		sum, err := fileSum(p)
		if err != nil {
			return err
		}
		w.out[rel] = sum
	}
	return nil
}

// addEnvironment keeps dir's own .terraform/environment, if there is one:
// it selects the workspace, which the encryption and backend blocks may
// read (terraform.workspace). The rest of .terraform is skipped.
func (w inputWalk) addEnvironment(p, rel string) error {
	switch sum, err := fileSum(filepath.Join(p, "environment")); {
	case err == nil:
		w.out[filepath.Join(rel, "environment")] = sum
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	return filepath.SkipDir
}

// leftOutEntry reports whether the entry at rel is .git or .terraform (at
// any depth), or the terraform.tfstate.d directory, which InputFiles skip.
func leftOutEntry(rel, name string, d os.DirEntry) bool {
	return name == ".git" || name == ".terraform" || (rel == "terraform.tfstate.d" && d.IsDir())
}

// keptFile reports whether the non-directory, non-link entry at rel is an
// input file: a regular file other than local state, and other than dir's
// own configuration files and lock file.
func keptFile(rel, name string, d os.DirEntry) bool {
	if !d.Type().IsRegular() || isLocalState(name) {
		return false
	}
	own := !strings.Contains(rel, string(filepath.Separator))
	return !own || (name != LockFileName && configExt(name) == "")
}

// isLocalState reports whether a file of this name is OpenTofu's local
// state, its backup or its lock, which the apply itself writes.
func isLocalState(name string) bool {
	return strings.HasSuffix(name, ".tfstate") || strings.HasSuffix(name, ".tfstate.backup") || name == ".terraform.tfstate.lock.info"
}

// fileSum is the sha256 of the file at p.
func fileSum(p string) ([32]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, fmt.Errorf("reading %s: %w", p, err)
	}
	return [32]byte(h.Sum(nil)), nil
}
