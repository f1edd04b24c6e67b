package scan

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxManifestSize bounds the modules.json read.
const maxManifestSize = 64 << 20

// manifestRecord is one module of modules.json, as OpenTofu's
// internal/modsdir/manifest.go writes it.
type manifestRecord struct {
	Key     string `json:"Key"`
	Source  string `json:"Source"`
	Version string `json:"Version,omitempty"`
	Dir     string `json:"Dir"`
}

// readManifest reads the modules.json at file: {"Modules": [records]},
// keyed by module key. Two records for one key are an error, as in
// OpenTofu's ReadManifestSnapshot.
func readManifest(file string) (map[string]manifestRecord, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading the module manifest: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the module manifest %s: %w", file, err)
	}
	if len(src) > maxManifestSize {
		return nil, fmt.Errorf("the module manifest %s is over %d bytes", file, maxManifestSize)
	}
	var doc struct {
		Modules []manifestRecord `json:"Modules"`
	}
	if len(strings.TrimSpace(string(src))) > 0 {
		if err := json.Unmarshal(src, &doc); err != nil {
			return nil, fmt.Errorf("reading the module manifest %s: %w", file, err)
		}
	}
	out := make(map[string]manifestRecord, len(doc.Modules))
	for _, r := range doc.Modules {
		if _, dup := out[r.Key]; dup {
			return nil, fmt.Errorf("the module manifest %s has two records for module %q", file, r.Key)
		}
		r.Dir = filepath.FromSlash(r.Dir)
		out[r.Key] = r
	}
	return out, nil
}

// installedPackages returns the package directories tofu get installed for
// the root module in dir: dir/.terraform/modules/NAME for each record of a
// module that is not local whose directory lies there. A local module path
// may lead into these (a module package calling its own submodules), and
// into no other .terraform directory.
func installedPackages(dir string, manifest map[string]manifestRecord) []string {
	var out []string
	for _, r := range manifest {
		if _, local := localSource(r.Source); local || r.Key == "" {
			continue
		}
		d := filepath.ToSlash(r.Dir)
		if filepath.IsAbs(r.Dir) {
			rel, err := filepath.Rel(dir, r.Dir)
			if err != nil {
				continue
			}
			d = filepath.ToSlash(rel)
		}
		parts := strings.Split(path.Clean(d), "/")
		if len(parts) < 3 || parts[0] != ".terraform" || parts[1] != "modules" {
			continue
		}
		p := filepath.Join(dir, ".terraform", "modules", parts[2])
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, p)
	}
	return out
}

// localSource reports whether a module source is a local path, which
// OpenTofu reads relative to the calling module's directory, and returns
// it cleaned with forward slashes. Local sources start with "./", "../",
// ".\" or "..\" (isModuleSourceLocal and parseModuleSourceLocal in
// OpenTofu's internal/addrs/module_source.go); an absolute path is not one.
func localSource(src string) (string, bool) {
	for _, p := range []string{"./", "../", `.\`, `..\`} {
		if strings.HasPrefix(src, p) {
			return path.Clean(strings.ReplaceAll(src, `\`, "/")), true
		}
	}
	return "", false
}
