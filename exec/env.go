package exec

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// EnvSpec is what a run's process environment is built from.
type EnvSpec struct {
	// Base is the environment of the server or worker, as os.Environ returns
	// it ("KEY=value" entries). Only the entries BuildEnv lists are kept.
	Base []string
	// Vars maps a variable name to its EncodeVar value; each becomes
	// TF_VAR_<name>. Names must be identifiers (see Validate).
	Vars map[string]string
	// Env is the run's own environment: credential entries such as
	// AWS_ACCESS_KEY_ID, SWITCHTENDER_TOKEN or VAULT_TOKEN.
	Env map[string]string
}

var (
	identRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	envKeyRE = regexp.MustCompile(`^[^=\x00]+$`)
)

// Validate reports the first entry BuildEnv cannot pass on: a variable name
// that is not an HCL identifier (letters, digits, '_' and '-', not starting
// with a digit or '-'), an environment name that is empty or contains '=' or
// NUL, or a value containing NUL.
func (s EnvSpec) Validate() error {
	for name, v := range s.Vars {
		if !identRE.MatchString(name) {
			return fmt.Errorf("variable name %q is not an identifier: use letters, digits, '_' and '-', starting with a letter or '_'", name)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("variable %q: value contains a NUL byte, which an environment variable cannot carry", name)
		}
	}
	for k, v := range s.Env {
		if !envKeyRE.MatchString(k) {
			return fmt.Errorf("environment name %q is empty or contains '=' or NUL; use a plain name such as AWS_ACCESS_KEY_ID", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("environment entry %s: value contains a NUL byte, which an environment variable cannot carry", k)
		}
	}
	return nil
}

// inherited names the entries of the server's environment a run keeps.
var inherited = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "LANG": true, "TZ": true, "TMPDIR": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
	"TF_PLUGIN_CACHE_DIR": true,
}

// BuildEnv returns the environment of a run's tofu or terraform process,
// sorted by name, one entry per name.
//
// From s.Base (the server's environment) a run inherits only PATH, HOME,
// USER, LOGNAME, LANG, LC_*, TZ, TMPDIR, http_proxy, https_proxy, no_proxy
// (lower and upper case), SSL_CERT_FILE, SSL_CERT_DIR, TF_PLUGIN_CACHE_DIR,
// and TF_CLI_CONFIG_FILE when it names a file that exists (so a dangling
// setting does not make tofu warn on every command). Everything else is
// dropped: the server's own credentials, TF_CLI_ARGS and every TF_CLI_ARGS_*
// (which would change the arguments of every step), the server's TF_VAR_*,
// TF_WORKSPACE, TF_DATA_DIR and TF_LOG*. When Base holds a name twice, the
// last entry counts, as in os/exec.
//
// Then s.Env (the run's credentials) is added, replacing inherited entries of
// the same name, then TF_VAR_<name> for each of s.Vars, replacing any of the
// same name from s.Env. Finally TF_IN_AUTOMATION=1 is set, and
// CHECKPOINT_DISABLE=1 unless s.Env sets CHECKPOINT_DISABLE, whose value is
// kept (spec "How values reach the configuration": every OpenTofu process
// runs with CHECKPOINT_DISABLE=1; a run whose own environment sets it keeps
// the value it sets).
//
// Entries Validate would reject are left out; call Validate first to report
// them.
func BuildEnv(s EnvSpec) []string {
	env := inheritedEnv(s.Base)
	for k, v := range s.Env {
		if envKeyRE.MatchString(k) && strings.IndexByte(v, 0) < 0 {
			env[k] = v
		}
	}
	for name, v := range s.Vars {
		if identRE.MatchString(name) && strings.IndexByte(v, 0) < 0 {
			env["TF_VAR_"+name] = v
		}
	}
	env["TF_IN_AUTOMATION"] = "1"
	if v, ok := s.Env["CHECKPOINT_DISABLE"]; ok && strings.IndexByte(v, 0) < 0 {
		env["CHECKPOINT_DISABLE"] = v
	} else {
		env["CHECKPOINT_DISABLE"] = "1"
	}
	return sortedEnv(env)
}

// inheritedEnv returns what a run inherits from base (see BuildEnv), by name;
// the last entry of a name counts.
func inheritedEnv(base []string) map[string]string {
	env := map[string]string{}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		switch {
		case inherited[k], strings.HasPrefix(k, "LC_"):
			env[k] = v
		case k == "TF_CLI_CONFIG_FILE":
			if fi, err := os.Stat(v); err == nil && fi.Mode().IsRegular() {
				env[k] = v
			} else {
				delete(env, k)
			}
		}
	}
	return env
}

// sortedEnv returns env as "KEY=value" entries sorted by name.
func sortedEnv(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.SortFunc(out, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	return out
}
