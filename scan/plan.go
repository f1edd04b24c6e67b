package scan

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/switchtender/switchtender/gate"
)

// The configuration snapshot in a saved plan, as OpenTofu's
// internal/plans/planfile/config_snapshot.go writes it: tfconfig/modules.json
// lists the modules ([{"Key","Source","Version","Dir"}]) and each file of
// module KEY is stored as tfconfig/m-KEY/NAME.
const (
	snapshotManifest     = "tfconfig/modules.json"
	snapshotModulePrefix = "tfconfig/m-"
	maxSnapshotManifest  = 64 << 20
)

// PlanDigest computes Digest from the configuration snapshot that the saved
// plan planFile embeds, so a caller can check that the plan was made from
// exactly the modules Module read. It reads the snapshot as OpenTofu's
// readConfigSnapshot does (an entry outside a module directory is ignored, a
// module with files but no manifest record is an error) and keeps of each
// module only the files ConfigFiles selects, as OpenTofu does when it loads
// the configuration back from the snapshot. A file over
// gate.MaxConfigFileSize is an error, and so is a plan that is not a zip
// archive: one encrypted with TF_ENCRYPTION must be decrypted first.
func PlanDigest(planFile string) (string, error) {
	z, err := zip.OpenReader(planFile)
	if err != nil {
		return "", fmt.Errorf("opening the saved plan: %w", err)
	}
	defer z.Close()
	files := map[string]map[string][32]byte{}
	var manifest []byte
	for _, f := range z.File {
		switch {
		case f.Name == snapshotManifest:
			if manifest, err = readZipFile(f, maxSnapshotManifest); err != nil {
				return "", err
			}
		case strings.HasPrefix(f.Name, snapshotModulePrefix):
			key, name := path.Split(strings.TrimPrefix(f.Name, snapshotModulePrefix))
			if key == "" {
				continue
			}
			key = strings.TrimSuffix(key, "/")
			src, err := readZipFile(f, gate.MaxConfigFileSize)
			if err != nil {
				return "", err
			}
			if files[key] == nil {
				files[key] = map[string][32]byte{}
			}
			files[key][name] = sha256.Sum256(src)
		}
	}
	if err := snapshotModules(manifest, files); err != nil {
		return "", fmt.Errorf("reading the saved plan's configuration snapshot: %w", err)
	}
	return Digest(files), nil
}

// snapshotModules adds the modules the snapshot manifest lists to files,
// and drops from each module the files OpenTofu does not load.
func snapshotModules(manifest []byte, files map[string]map[string][32]byte) error {
	if manifest == nil {
		return errors.New("it has no " + snapshotManifest)
	}
	var records []manifestRecord
	if err := json.Unmarshal(manifest, &records); err != nil {
		return fmt.Errorf("its module manifest: %w", err)
	}
	listed := map[string]bool{}
	for _, r := range records {
		listed[r.Key] = true
		if files[r.Key] == nil {
			files[r.Key] = map[string][32]byte{}
		}
	}
	for key, mod := range files {
		if !listed[key] {
			return fmt.Errorf("it has files for module %q, which its manifest does not list", key)
		}
		names := make([]string, 0, len(mod))
		for n := range mod {
			names = append(names, n)
		}
		keep := map[string]bool{}
		for _, n := range ConfigFiles(names) {
			keep[n] = true
		}
		for _, n := range names {
			if !keep[n] {
				delete(mod, n)
			}
		}
	}
	return nil
}

// readZipFile reads an entry of the plan's archive, refusing one over max
// bytes.
func readZipFile(f *zip.File, max int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(max) {
		return nil, fmt.Errorf("saved plan entry %s is over %d bytes", f.Name, max)
	}
	r, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("opening saved plan entry %s: %w", f.Name, err)
	}
	defer r.Close()
	src, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading saved plan entry %s: %w", f.Name, err)
	}
	if int64(len(src)) > max {
		return nil, fmt.Errorf("saved plan entry %s is over %d bytes", f.Name, max)
	}
	return src, nil
}
