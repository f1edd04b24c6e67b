package scan

import (
	"sort"
	"strings"
)

// Configuration file extensions, as OpenTofu v1.12 names them
// (internal/configs/parser_config_dir.go). The test extensions matter only
// so that a test file is not taken for a configuration file.
var (
	configExts = []string{".tf", ".tf.json", ".tofu", ".tofu.json"}
	testExts   = []string{".tftest.hcl", ".tftest.json", ".tofutest.hcl", ".tofutest.json"}
)

// IsIgnoredFile reports whether OpenTofu ignores a file of this name (no
// directory part) in a module directory: hidden files (a leading "." — which
// covers emacs's ".#" lock files), vim's "~" backups and emacs's "#...#"
// autosaves. It follows IsIgnoredFile in OpenTofu's
// internal/configs/parser_config_dir.go.
func IsIgnoredFile(name string) bool {
	return strings.HasPrefix(name, ".") ||
		strings.HasSuffix(name, "~") ||
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")
}

// configExt returns the configuration extension of name (".tf", ".tf.json",
// ".tofu" or ".tofu.json"), or "" when OpenTofu does not load it as
// configuration (no such extension, or a test file).
func configExt(name string) string {
	for _, ext := range testExts {
		if strings.HasSuffix(name, ext) {
			return ""
		}
	}
	for _, ext := range configExts {
		if strings.HasSuffix(name, ext) {
			return ext
		}
	}
	return ""
}

// isJSONFile reports whether a configuration file of this name is read with
// the JSON syntax (.tf.json, .tofu.json) rather than the native one.
func isJSONFile(name string) bool {
	return strings.HasSuffix(name, ".json")
}

// ConfigFiles returns, sorted, the names among the regular files names of a
// module directory that OpenTofu loads as the module's configuration, primary
// and override files alike: those ending in .tf, .tf.json, .tofu or
// .tofu.json, not ignored (IsIgnoredFile), where x.tofu shadows x.tf and
// x.tofu.json shadows x.tf.json. It follows dirFiles and
// filterTfPathsWithTofuAlternatives in OpenTofu's
// internal/configs/parser_config_dir.go; primary and override files are
// filtered apart there, but a file and its shadow always share a base name
// and so a list. These are also exactly the files OpenTofu stores in a saved
// plan's configuration snapshot (internal/configs/configload/loader_snapshot.go).
func ConfigFiles(names []string) []string {
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	var out []string
	for _, n := range names {
		ext := configExt(n)
		if ext == "" || IsIgnoredFile(n) {
			continue
		}
		if strings.HasPrefix(ext, ".tf") {
			shadow := strings.TrimSuffix(n, ext) + strings.Replace(ext, ".tf", ".tofu", 1)
			if present[shadow] {
				continue
			}
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// isOverrideFile reports whether OpenTofu merges the named configuration
// file as an override file: its base name (without the extension) is
// "override" or ends in "_override".
func isOverrideFile(name string) bool {
	base := strings.TrimSuffix(name, configExt(name))
	return base == "override" || strings.HasSuffix(base, "_override")
}
