package config

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// newKey returns a fresh ed25519 public key and its authorized_keys line.
func newKey(t *testing.T, comment string) (ssh.PublicKey, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	if comment != "" {
		line += " " + comment
	}
	return k, line
}

type fixture struct {
	dir, checkout                        string
	alice, bob, bot, worker              ssh.PublicKey
	aliceLine, bobLine, botLine, wrkLine string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), checkout: t.TempDir()}
	f.alice, f.aliceLine = newKey(t, "alice@laptop")
	f.bob, f.bobLine = newKey(t, "")
	f.bot, f.botLine = newKey(t, "deploy-bot")
	f.worker, f.wrkLine = newKey(t, "worker-1")
	if err := os.MkdirAll(filepath.Join(f.dir, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "policies", "plan.rego"), []byte("package plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// sketch is DESIGN.md's configuration sketch, with real keys and paths, and
// each block's attributes on their own lines (HCL allows only one attribute
// in a single-line block).
func (f *fixture) sketch() string {
	r := strings.NewReplacer(
		"CHECKOUT", f.checkout,
		"ALICE", f.aliceLine, "BOB", f.bobLine, "BOT", f.botLine, "WORKER", f.wrkLine,
	)
	return r.Replace(`server {
  ssh_listen = "127.0.0.1:2222"
  data_dir   = "./data"
  max_parallel = 3
  cancel_grace = "15s"
  allow_self_approval = true
}

project "infra" {
  path = "CHECKOUT"     # a checkout; a run's command names a directory inside it
}

credential "cloud" { env = { AWS_ACCESS_KEY_ID = "AKIA", AWS_SECRET_ACCESS_KEY = "s3cret" } }
credential "api"   { token = "tok-123" }                      # arrives as SWITCHTENDER_TOKEN
credential "vault" {                                      # resolved fresh for every run
  command = ["vault", "kv", "get", "-field=token", "secret/ci"]
  env_var = "VAULT_TOKEN"
}

template "network" {
  project     = "infra"
  tool        = "opentofu"            # or "terraform"
  command     = "infra/network"
  queue       = "default"
  credentials = ["cloud", "vault"]
  vars        = {
    environment = "prod"
    regions     = ["a", "b"]
    tags        = { a = "b", n = { deep = true } }
    big         = 123456789012345678901234567890
    ratio       = 0.1
    neg         = -2.5
  }
  survey "region" {
    type    = "string"                       # string, number, bool, list, map, choice
    default = "eu-west-1"
  }
  survey "count" {
    type        = "number"
    description = "how many"
  }
  survey "size" {
    type    = "choice"
    choices = ["small", "large"]
    default = "small"
  }
  survey "password" {
    sensitive = true
  }
  survey "zones" {
    type    = "list"
    default = ["a", 1]
  }
  survey "labels" {
    type    = "map"
    default = { team = "infra" }
  }
  survey "enabled" {
    type    = "bool"
    default = false
  }
  check_every = "6h"                         # scheduled drift checks
}

template "legacy" {
  project = "infra"
  tool    = "terraform"
  command = "./legacy/"
  queue   = "eu"
}

queue "default" {}                            # the control node executes it
queue "eu"      { pool = "eu" }               # relay workers of pool "eu" execute it
pool "eu" {
  delivery_key = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
  workers      = ["WORKER"]
}

rule "few-destroys" {
  templates       = ["network"]
  max_destroy     = 0
  approvers       = ["alice", "bob"]
  exclude_dry_run = true
}
rule "policy"   { plan_gate = "policies/plan.rego" }
rule "prod" {
  templates        = ["network"]
  projects         = ["infra"]
  kinds            = ["apply", "reconcile"]
  requesters       = ["alice", "deploy-bot"]
  require_approval = true
  approvers        = ["alice"]
}
exemption "bot" {
  agents    = ["deploy-bot"]
  templates = ["network"]
  kinds     = ["plan"]
}

user  "alice" {
  public_key = "ALICE"
  roles      = ["launch", "approve"]
}
user "bob" {
  public_keys = ["BOB"]
  roles       = ["approve"]
}
agent "deploy-bot" { public_key = "BOT" }
`)
}

func TestLoadSketch(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.dir, "switchtender.hcl")
	if err := os.WriteFile(path, []byte(f.sketch()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Dir != f.dir {
		t.Errorf("Dir = %q, want %q", cfg.Dir, f.dir)
	}
	wantServer := Server{
		SSHListen:         "127.0.0.1:2222",
		DataDir:           filepath.Join(f.dir, "data"),
		HostKey:           filepath.Join(f.dir, "data", "ssh_host_ed25519"),
		SealKey:           filepath.Join(f.dir, "data", "seal.key"),
		MaxParallel:       3,
		CancelGrace:       15 * time.Second,
		AllowSelfApproval: true,
		TimeZone:          time.UTC,
	}
	if cfg.Server != wantServer {
		t.Errorf("Server = %+v\nwant %+v", cfg.Server, wantServer)
	}

	if got := cfg.Projects["infra"]; got == nil || got.Path != f.checkout || got.Name != "infra" || got.Line != path+":9" {
		t.Errorf("project infra = %+v", got)
	}
	if len(cfg.Projects) != 1 {
		t.Errorf("projects = %d", len(cfg.Projects))
	}

	wantCreds := map[string]*Credential{
		"cloud": {Name: "cloud", Env: map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s3cret"}, Line: path + ":13"},
		"api":   {Name: "api", Token: "tok-123", Line: path + ":14"},
		"vault": {Name: "vault", Command: []string{"vault", "kv", "get", "-field=token", "secret/ci"}, EnvVar: "VAULT_TOKEN", Line: path + ":15"},
	}
	if !reflect.DeepEqual(cfg.Credentials, wantCreds) {
		t.Errorf("credentials:\n got %#v\nwant %#v", cfg.Credentials, wantCreds)
	}

	net := cfg.Templates["network"]
	if net == nil {
		t.Fatal("template network missing")
	}
	if net.Name != "network" || net.Project != "infra" || net.Tool != ToolOpenTofu || net.Command != "infra/network" ||
		net.Queue != "default" || net.CheckEvery != 6*time.Hour || net.Line != path+":20" ||
		!reflect.DeepEqual(net.Credentials, []string{"cloud", "vault"}) {
		t.Errorf("template network = %+v", net)
	}
	wantVars := map[string]any{
		"environment": "prod",
		"regions":     []any{"a", "b"},
		"tags":        map[string]any{"a": "b", "n": map[string]any{"deep": true}},
		"big":         json.Number("123456789012345678901234567890"),
		"ratio":       json.Number("0.1"),
		"neg":         json.Number("-2.5"),
	}
	if !reflect.DeepEqual(net.Vars, wantVars) {
		t.Errorf("vars:\n got %#v\nwant %#v", net.Vars, wantVars)
	}
	wantSurvey := []*SurveyField{
		{Name: "region", Type: TypeString, Default: "eu-west-1", Line: path + ":34"},
		{Name: "count", Type: TypeNumber, Required: true, Description: "how many", Line: path + ":38"},
		{Name: "size", Type: TypeChoice, Choices: []string{"small", "large"}, Default: "small", Line: path + ":42"},
		{Name: "password", Type: TypeString, Required: true, Sensitive: true, Line: path + ":47"},
		{Name: "zones", Type: TypeList, Default: []any{"a", json.Number("1")}, Line: path + ":50"},
		{Name: "labels", Type: TypeMap, Default: map[string]any{"team": "infra"}, Line: path + ":54"},
		{Name: "enabled", Type: TypeBool, Default: false, Line: path + ":58"},
	}
	if len(net.Survey) != len(wantSurvey) {
		t.Fatalf("survey has %d fields, want %d", len(net.Survey), len(wantSurvey))
	}
	for i := range wantSurvey {
		if !reflect.DeepEqual(net.Survey[i], wantSurvey[i]) {
			t.Errorf("survey[%d]:\n got %+v\nwant %+v", i, net.Survey[i], wantSurvey[i])
		}
	}

	legacy := cfg.Templates["legacy"]
	if legacy == nil || legacy.Tool != ToolTerraform || legacy.Command != "legacy" || legacy.Queue != "eu" ||
		legacy.Vars != nil || legacy.Survey != nil || legacy.CheckEvery != 0 || legacy.Credentials != nil {
		t.Errorf("template legacy = %+v", legacy)
	}

	wantQueues := map[string]*Queue{
		"default": {Name: "default", Line: path + ":72"},
		"eu":      {Name: "eu", Pool: "eu", Line: path + ":73"},
	}
	if !reflect.DeepEqual(cfg.Queues, wantQueues) {
		t.Errorf("queues = %+v", cfg.Queues)
	}
	pool := cfg.Pools["eu"]
	if pool == nil || pool.DeliveryKey != "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p" ||
		!reflect.DeepEqual(pool.Workers, []string{f.wrkLine}) || len(pool.WorkerKeys) != 1 ||
		string(pool.WorkerKeys[0].Marshal()) != string(f.worker.Marshal()) || pool.Line != path+":74" {
		t.Errorf("pool eu = %+v", pool)
	}

	zero := 0
	wantRules := []*Rule{
		{Name: "few-destroys", Templates: []string{"network"}, MaxDestroy: &zero, Approvers: []string{"alice", "bob"}, ExcludeDryRun: true, Line: path + ":79"},
		{Name: "policy", PlanGate: filepath.Join(f.dir, "policies", "plan.rego"), Line: path + ":85"},
		{Name: "prod", Templates: []string{"network"}, Projects: []string{"infra"}, Kinds: []string{"apply", "reconcile"},
			Requesters: []string{"alice", "deploy-bot"}, RequireApproval: true, Approvers: []string{"alice"}, Line: path + ":86"},
	}
	if !reflect.DeepEqual(cfg.Rules, wantRules) {
		for i, r := range cfg.Rules {
			t.Errorf("rule[%d] = %+v", i, r)
		}
	}
	wantEx := []*Exemption{{Name: "bot", Agents: []string{"deploy-bot"}, Templates: []string{"network"}, Kinds: []string{"plan"}, Line: path + ":94"}}
	if !reflect.DeepEqual(cfg.Exemptions, wantEx) {
		t.Errorf("exemptions = %+v", cfg.Exemptions[0])
	}

	alice, bob := cfg.Users["alice"], cfg.Users["bob"]
	if alice == nil || !reflect.DeepEqual(alice.Roles, []string{"launch", "approve"}) || len(alice.PublicKeys) != 1 || alice.Line != path+":100" {
		t.Errorf("alice = %+v", alice)
	}
	if !alice.Has(RoleApprove) || !alice.Has(RoleLaunch) || bob.Has(RoleLaunch) || !bob.Has(RoleApprove) || alice.Has("admin") {
		t.Error("Has gives wrong answers")
	}
	bot := cfg.Agents["deploy-bot"]
	if bot == nil || len(bot.PublicKeys) != 1 || bot.Line != path+":108" {
		t.Errorf("agent = %+v", bot)
	}

	// Identify: every key maps to its owner, by key bytes.
	other, _ := newKey(t, "")
	for _, tc := range []struct {
		key         ssh.PublicKey
		name        string
		agent, ok   bool
		description string
	}{
		{f.alice, "alice", false, true, "user by public_key"},
		{f.bob, "bob", false, true, "user by public_keys"},
		{f.bot, "deploy-bot", true, true, "agent"},
		{f.worker, "", false, false, "a worker is neither user nor agent"},
		{other, "", false, false, "unknown key"},
		{nil, "", false, false, "nil key"},
	} {
		// a key parsed afresh from its wire form, so matching is by bytes, not identity
		key := tc.key
		if key != nil {
			var err error
			if key, err = ssh.ParsePublicKey(tc.key.Marshal()); err != nil {
				t.Fatal(err)
			}
		}
		name, agent, ok := cfg.Identify(key)
		if name != tc.name || agent != tc.agent || ok != tc.ok {
			t.Errorf("Identify(%s) = %q, %v, %v; want %q, %v, %v", tc.description, name, agent, ok, tc.name, tc.agent, tc.ok)
		}
	}
	if p, ok := cfg.IdentifyWorker(f.worker); !ok || p != "eu" {
		t.Errorf("IdentifyWorker(worker) = %q, %v", p, ok)
	}
	if _, ok := cfg.IdentifyWorker(f.alice); ok {
		t.Error("IdentifyWorker(alice) matched a pool")
	}
}

func TestParseDefaults(t *testing.T) {
	checkout := t.TempDir()
	base := t.TempDir()
	src := `project "p" { path = "` + checkout + `" }
template "t" {
  project = "p"
  command = "."
}
`
	cfg, err := Parse([]byte(src), "demo.hcl", base)
	if err != nil {
		t.Fatal(err)
	}
	want := Server{
		SSHListen:   "127.0.0.1:2222",
		DataDir:     filepath.Join(base, "data"),
		HostKey:     filepath.Join(base, "data", "ssh_host_ed25519"),
		SealKey:     filepath.Join(base, "data", "seal.key"),
		MaxParallel: 2,
		CancelGrace: 10 * time.Second,
		TimeZone:    time.UTC,
	}
	if cfg.Server != want {
		t.Errorf("Server = %+v, want %+v", cfg.Server, want)
	}
	if q := cfg.Queues["default"]; q == nil || q.Pool != "" || len(cfg.Queues) != 1 {
		t.Errorf("default queue not added: %+v", cfg.Queues)
	}
	tm := cfg.Templates["t"]
	if tm.Tool != "opentofu" || tm.Queue != "default" || tm.Command != "." || tm.Line != "demo.hcl:2" {
		t.Errorf("template = %+v", tm)
	}
	if len(cfg.Rules) != 0 || len(cfg.Users) != 0 || cfg.Pools == nil || cfg.Agents == nil {
		t.Errorf("unexpected collections: %+v", cfg)
	}
}

func TestServerPaths(t *testing.T) {
	base := t.TempDir()
	src := `server {
  data_dir = "/var/lib/st"
  host_key = "keys/host"
  seal_key = "/etc/st/seal.key"
}`
	cfg, err := Parse([]byte(src), "s.hcl", base)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.DataDir != "/var/lib/st" || cfg.Server.HostKey != filepath.Join(base, "keys/host") || cfg.Server.SealKey != "/etc/st/seal.key" {
		t.Errorf("server = %+v", cfg.Server)
	}
	cfg, err = Parse([]byte(`server { data_dir = "/var/lib/st" }`), "s.hcl", base)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.HostKey != "/var/lib/st/ssh_host_ed25519" || cfg.Server.SealKey != "/var/lib/st/seal.key" {
		t.Errorf("keys do not default into data_dir: %+v", cfg.Server)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.hcl"))
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "reading config") {
		t.Errorf("err = %v", err)
	}
}

func TestLoadRelativePaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "checkouts", "infra"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `project "infra" { path = "checkouts/infra" }
server { data_dir = "state" }
`
	path := filepath.Join(dir, "st.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Load from another working directory: paths follow the file, not the cwd.
	t.Chdir(t.TempDir())
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Projects["infra"].Path; got != filepath.Join(dir, "checkouts", "infra") {
		t.Errorf("project path = %q", got)
	}
	if cfg.Server.DataDir != filepath.Join(dir, "state") || cfg.Server.SealKey != filepath.Join(dir, "state", "seal.key") {
		t.Errorf("server = %+v", cfg.Server)
	}
}

// A sensitive field's answer is never repeated in an error.
func TestSensitiveAnswerNotInError(t *testing.T) {
	for _, typ := range []string{TypeNumber, TypeBool, TypeList, TypeMap, TypeChoice} {
		f := &SurveyField{Name: "secret", Type: typ, Sensitive: true, Choices: []string{"a"}}
		_, err := f.ParseAnswer(`[{hunter2-canary`)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "sensitive") {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

func TestSSHLimitsFromTheServerBlock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.hcl")
	src := "server {\n  ssh_handshake_timeout = \"5s\"\n  ssh_idle_timeout = \"2m\"\n  ssh_max_startups = 8\n  ssh_max_connections = 100\n  ssh_max_connections_per_source = 64\n  ssh_max_command_bytes = 4096\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if s.SSHHandshakeTimeout != 5*time.Second || s.SSHIdleTimeout != 2*time.Minute || s.SSHMaxStartups != 8 ||
		s.SSHMaxConns != 100 || s.SSHMaxConnsPerSource != 64 || s.SSHMaxCommandBytes != 4096 {
		t.Errorf("limits = %+v", s)
	}
	os.WriteFile(path, []byte("server {\n  ssh_max_startups = 0\n}\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "s.hcl:2,") || !strings.Contains(err.Error(), "give 1 or more") {
		t.Errorf("ssh_max_startups = 0: %v", err)
	}
}

// A sensitive field's default is never quoted back in an error.
func TestSensitiveDefaultNotQuoted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.hcl")
	src := `project "p" {
  path = "."
}
template "t" {
  project = "p"
  command = "."
  survey "size" {
    type      = "choice"
    choices   = ["small", "large"]
    sensitive = true
    default   = "choice-canary-4471"
  }
}
`
	os.WriteFile(path, []byte(src), 0o600)
	_, err := Load(path)
	if err == nil || strings.Contains(err.Error(), "choice-canary-4471") || !strings.Contains(err.Error(), "not one of its choices") {
		t.Errorf("error: %v", err)
	}
}

// A rule may not take the name of one of the server's own holds.
func TestReservedRuleNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.hcl")
	for _, name := range []string{"require_approval", "agent", "gate", "ai_proposal"} {
		os.WriteFile(path, []byte("rule \""+name+"\" {\n  require_approval = true\n}\n"), 0o600)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "s.hcl:1,") || !strings.Contains(err.Error(), "another name") {
			t.Errorf("rule %q: %v", name, err)
		}
	}
}
