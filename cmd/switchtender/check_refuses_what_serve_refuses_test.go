package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `check --config` for CI: "prints every problem with
// file:line and exits non-zero"; "refuses what serve --strict refuses".

// checkFixtureConfig writes a configuration with serverExtra in its server block
// and returns its path and directory.
func checkFixtureConfig(t *testing.T, serverExtra string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "st.hcl")
	src := "server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \"" + filepath.Join(dir, "data") + "\"\n" + serverExtra + "}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// Promise: check "refuses what serve --strict refuses" (a CI gate that passes
// must not let a deploy fail to start). Once, a seal_key that group/others
// can read (mode 0644) makes serve refuse to start (seal.LoadOrCreateKey ->
// LoadKey: "has mode 0644 ... run chmod 600"), exit 1; `check` says the
// configuration is fine, exit 0, because server.CheckData
// (server/sealcheck.go:136) returns before loading the key when the data
// directory holds no store yet — exactly the first deploy CI is meant to vet.
// Same for a seal_key that is not a key at all.
func TestCheckRefusesASealKeyServeRefuses(t *testing.T) {
	for name, mode := range map[string]os.FileMode{"world-readable": 0o644, "garbage": 0o600} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			key := filepath.Join(dir, "seal.key")
			if err := os.WriteFile(key, []byte("not an age identity\n"), mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(key, mode)
			cfg, _ := checkFixtureConfig(t, "  seal_key = \""+key+"\"\n")
			serveOut, serveCode := runBinary(t, "serve", "--config", cfg, "--strict")
			if serveCode == 0 || strings.Contains(serveOut, "serving SSH") {
				t.Fatalf("serve --strict started with a bad seal key: exit %d\n%s", serveCode, serveOut)
			}
			out, code := runBinary(t, "check", "--config", cfg)
			if code == 0 {
				t.Errorf("BREAK: serve refuses to start (exit %d: %s) but check passes it, exit 0:\n%s", serveCode, firstLine(serveOut), out)
			}
		})
	}
}

// Same promise, the SSH host key: a host_key file that is not a key makes
// serve fail (exit 1, nothing listens); check never looks at host_key
// (cmd/switchtender/check.go checkProblems: server.Check + server.CheckData;
// neither reads Server.HostKey), so CI passes it.
func TestCheckRefusesAHostKeyServeRefuses(t *testing.T) {
	dir := t.TempDir()
	hk := filepath.Join(dir, "host_key")
	if err := os.WriteFile(hk, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\ngarbage\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ := checkFixtureConfig(t, "  host_key = \""+hk+"\"\n")
	serveOut, serveCode := runBinary(t, "serve", "--config", cfg, "--strict")
	if serveCode == 0 || strings.Contains(serveOut, "serving SSH") {
		t.Skipf("serve accepted the garbage host key (exit %d): nothing to compare\n%s", serveCode, serveOut)
	}
	out, code := runBinary(t, "check", "--config", cfg)
	if code == 0 {
		t.Errorf("BREAK: serve refuses to start (exit %d: %s) but check passes it, exit 0:\n%s", serveCode, firstLine(serveOut), out)
	}
}

// Two rules whose policies do not compile: check names both rules' file:line
// and exits 1, and creates no data directory.
func TestCheckGivesEveryProblemItsLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.rego"), []byte("package switchtender\n\ndeny contains msg if {\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "bad2.rego"), []byte("package switchtender\n\ndeny contains msg if { msg := }\n"), 0o600)
	cfg := filepath.Join(dir, "st.hcl")
	os.WriteFile(cfg, []byte("server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \""+filepath.Join(dir, "data")+"\"\n}\n"+
		"rule \"a\" {\n  plan_gate = \"bad.rego\"\n}\nrule \"b\" {\n  plan_gate = \"bad2.rego\"\n}\n"), 0o600)
	out, code := runBinary(t, "check", "--config", cfg)
	if code != 1 {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	for _, want := range []string{cfg + ":5", cfg + ":8"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %s:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("check created the data directory")
	}
}

// Low severity. Promise: check "prints every problem with file:line". Fixed
// by saying so: a file that does not load stops check before the policies are
// compiled, and check now says what was not checked. Once, when anything
// makes the file fail to load (here rule "b"'s plan_gate file is missing, a
// load error), check prints only the load errors (cmd/switchtender/check.go
// checkProblems: `return loadProblems(path, err), nil`) and never compiles
// the policies that are there: rule "a"'s broken policy is reported only on
// the next CI run.
func TestCheckSaysWhatALoadErrorLeftUnchecked(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.rego"), []byte("package switchtender\n\ndeny contains msg if {\n"), 0o600)
	cfg := filepath.Join(dir, "st.hcl")
	os.WriteFile(cfg, []byte("server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \""+filepath.Join(dir, "data")+"\"\n}\n"+
		"rule \"a\" {\n  plan_gate = \"bad.rego\"\n}\nrule \"b\" {\n  plan_gate = \"missing.rego\"\n}\n"), 0o600)
	out, code := runBinary(t, "check", "--config", cfg)
	if code != 1 || !strings.Contains(out, "missing.rego") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "bad.rego") && !strings.Contains(out, "were not checked yet: fix the errors above and run check again") {
		t.Errorf("BREAK: check reports the missing policy but neither rule a's policy that does not compile (bad.rego) nor that it was not checked:\n%s", out)
	}
}

// firstLine is the line of s that says why serve stopped (its last).
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
