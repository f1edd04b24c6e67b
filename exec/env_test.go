package exec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildEnv(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "tofurc")
	os.WriteFile(cfg, nil, 0o644)
	base := []string{
		"PATH=/usr/bin", "HOME=/home/srv", "USER=srv", "LOGNAME=srv", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=en_GB",
		"TZ=UTC", "TMPDIR=/tmp", "http_proxy=http://p", "HTTPS_PROXY=http://p", "no_proxy=localhost",
		"SSL_CERT_FILE=/etc/ssl/c.pem", "SSL_CERT_DIR=/etc/ssl", "TF_PLUGIN_CACHE_DIR=/cache",
		"TF_CLI_CONFIG_FILE=" + cfg,
		"AWS_SECRET_ACCESS_KEY=server-secret", "TF_CLI_ARGS=-target=x", "TF_CLI_ARGS_apply=-destroy",
		"TF_VAR_region=server", "TF_WORKSPACE=prod", "TF_DATA_DIR=/x", "TF_LOG=trace", "TF_LOG_PATH=/l",
		"SWITCHTENDER_KEY=k", "CHECKPOINT_DISABLE=", "TF_IN_AUTOMATION=", "HOME=/home/last",
		"noequals",
	}
	got := BuildEnv(EnvSpec{
		Base: base,
		Vars: map[string]string{"region": "eu-west-1", "tags": `{"a":"b"}`},
		Env:  map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "SWITCHTENDER_TOKEN": "tok", "TZ": "Europe/Paris"},
	})
	want := []string{
		"AWS_ACCESS_KEY_ID=AKIA", "CHECKPOINT_DISABLE=1", "HOME=/home/last", "HTTPS_PROXY=http://p", "LANG=C.UTF-8",
		"LC_ALL=C", "LC_TIME=en_GB", "LOGNAME=srv", "PATH=/usr/bin", "SSL_CERT_DIR=/etc/ssl", "SSL_CERT_FILE=/etc/ssl/c.pem",
		"SWITCHTENDER_TOKEN=tok", "TF_CLI_CONFIG_FILE=" + cfg, "TF_IN_AUTOMATION=1", "TF_PLUGIN_CACHE_DIR=/cache",
		"TF_VAR_region=eu-west-1", `TF_VAR_tags={"a":"b"}`, "TMPDIR=/tmp", "TZ=Europe/Paris", "USER=srv",
		"http_proxy=http://p", "no_proxy=localhost",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("BuildEnv =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBuildEnvDropsDanglingCLIConfig(t *testing.T) {
	got := BuildEnv(EnvSpec{Base: []string{"TF_CLI_CONFIG_FILE=/nonexistent/.terraformrc", "TF_CLI_CONFIG_FILE=" + t.TempDir()}})
	if _, ok := LookupEnv(got, "TF_CLI_CONFIG_FILE"); ok {
		t.Fatalf("TF_CLI_CONFIG_FILE naming a missing file or a directory was kept: %q", got)
	}
}

func TestBuildEnvRunKeepsItsCheckpointSetting(t *testing.T) {
	got := BuildEnv(EnvSpec{Base: []string{"CHECKPOINT_DISABLE=1"}, Env: map[string]string{"CHECKPOINT_DISABLE": ""}})
	if v, ok := LookupEnv(got, "CHECKPOINT_DISABLE"); !ok || v != "" {
		t.Fatalf("CHECKPOINT_DISABLE = %q, %v; want the run's own empty value", v, ok)
	}
	got = BuildEnv(EnvSpec{Base: []string{"CHECKPOINT_DISABLE=0"}})
	if v, _ := LookupEnv(got, "CHECKPOINT_DISABLE"); v != "1" {
		t.Fatalf("CHECKPOINT_DISABLE = %q, want 1 whatever the server's environment says", v)
	}
}

func TestBuildEnvVarsOverrideEnvAndInvalidEntriesLeftOut(t *testing.T) {
	s := EnvSpec{
		Vars: map[string]string{"x": "from-vars", "bad name": "v", "nul": "a\x00b"},
		Env:  map[string]string{"TF_VAR_x": "from-env", "A=B": "v"},
	}
	if err := s.Validate(); err == nil {
		t.Fatal("Validate accepted a variable name with a space")
	}
	got := BuildEnv(s)
	if v, _ := LookupEnv(got, "TF_VAR_x"); v != "from-vars" {
		t.Fatalf("TF_VAR_x = %q, want the run's variable to win", v)
	}
	for _, kv := range got {
		if strings.Contains(kv, "bad name") || strings.Contains(kv, "\x00") || strings.HasPrefix(kv, "A=") {
			t.Fatalf("invalid entry passed on: %q", kv)
		}
	}
	if err := (EnvSpec{Vars: map[string]string{"ok_name-1": "v"}, Env: map[string]string{"VAULT_TOKEN": "t"}}).Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, bad := range []EnvSpec{
		{Vars: map[string]string{"1abc": ""}},
		{Vars: map[string]string{"a": "x\x00"}},
		{Env: map[string]string{"": "x"}},
		{Env: map[string]string{"A=B": "x"}},
		{Env: map[string]string{"A": "\x00"}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
}

// LookupEnv returns the value of name in env ("KEY=value" entries, as
// BuildEnv returns them; the last entry counts) and whether it is set.
func LookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
