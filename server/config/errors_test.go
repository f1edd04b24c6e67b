package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrors parses a case's snippet followed by a valid prelude (so the
// snippet's lines are the file's first lines) and checks the error names
// file:line and says what is wrong.
func TestErrors(t *testing.T) {
	f := newFixture(t)
	afile := filepath.Join(f.dir, "afile")
	if err := os.WriteFile(afile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	prelude := strings.NewReplacer("CHECKOUT", f.checkout, "ALICE", f.aliceLine, "BOB", f.bobLine, "BOT", f.botLine).Replace(`
project "infra" { path = "CHECKOUT" }
credential "cloud" { token = "t" }
pool "eu" {}
template "net" {
  project = "infra"
  command = "net"
}
user "alice" {
  public_key = "ALICE"
  roles      = ["approve"]
}
user "bob" { public_key = "BOB" }
agent "bot" { public_key = "BOT" }
`)
	if _, err := Parse([]byte(prelude), "e.hcl", f.dir); err != nil {
		t.Fatalf("prelude does not parse: %v", err)
	}
	cases := []struct {
		name string
		src  string
		want []string // substrings of the error
	}{
		{"unknown block", `widget "x" {}`, []string{"e.hcl:1,1:", "Unsupported block type", `"widget"`, "holds server, project"}},
		{"unknown attribute", "template \"t\" {\n  project = \"infra\"\n  colour = \"red\"\n  command = \"x\"\n}",
			[]string{"e.hcl:3,3:", "Unsupported argument", `"colour"`, "a template block takes project, command, tool"}},
		{"unknown server attribute", "server {\n  listen = \":22\"\n}", []string{"e.hcl:2,", "Unsupported argument", `"listen"`}},
		{"bad metrics_listen", "server {\n  metrics_listen = \"9464\"\n}", []string{"e.hcl:2,", "Invalid listen address", "metrics_listen", "HOST:PORT"}},
		{"notify bad url", "notify \"n\" {\n  url = \"ftp://hooks.example/T0K3N\"\n  format = \"slack\"\n}", []string{"e.hcl:2,", "Invalid URL", "http:// or https://"}},
		{"notify unknown event", "notify \"n\" {\n  url = \"https://h.example/x\"\n  format = \"slack\"\n  events = [\"approved\", \"merged\"]\n}", []string{"e.hcl:4,25:", "Unknown event", `"merged"`, "awaiting_approval"}},
		{"notify json without secret", "notify \"n\" {\n  url = \"https://h.example/x\"\n}", []string{"e.hcl:1,", "Missing secret", "X-Switchtender-Signature"}},
		{"notify weak secret", "notify \"n\" {\n  url = \"https://h.example/x\"\n  secret = \"abc\"\n}", []string{"e.hcl:3,", "Weak secret"}},
		{"missing required", "template \"t\" {\n  project = \"infra\"\n}", []string{"e.hcl:1,", "Missing required argument", `"command"`}},
		{"template unknown project", "template \"t\" {\n  project = \"nope\"\n  command = \"x\"\n}",
			[]string{"e.hcl:2,13:", "Unknown project", `template "t" names project "nope"`, "add a project block"}},
		{"template unknown queue", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  queue = \"fast\"\n}",
			[]string{"e.hcl:4,", "Unknown queue", `"fast"`}},
		{"template unknown credential", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  credentials = [\"cloud\", \"aws\"]\n}",
			[]string{"e.hcl:4,27:", "Unknown credential", `"aws"`}},
		{"rule unknown template", "rule \"r\" {\n  templates = [\"web\"]\n  max_destroy = 0\n}",
			[]string{"e.hcl:2,16:", "Unknown template", `rule "r" names template "web"`}},
		{"rule unknown project", "rule \"r\" {\n  projects = [\"web\"]\n  max_destroy = 0\n}", []string{"e.hcl:2,", "Unknown project", `"web"`}},
		{"rule unknown approver", "rule \"r\" {\n  require_approval = true\n  approvers = [\"alice\", \"carol\"]\n}",
			[]string{"e.hcl:3,25:", "Unknown user", `"carol"`}},
		{"rule approver without role", "rule \"r\" {\n  require_approval = true\n  approvers = [\"bob\"]\n}",
			[]string{"e.hcl:3,", "lacks the \"approve\" role", `"bob"`}},
		{"rule agent approver", "rule \"r\" {\n  require_approval = true\n  approvers = [\"bot\"]\n}", []string{"e.hcl:3,", "Agent as approver"}},
		{"rule unknown requester", "rule \"r\" {\n  require_approval = true\n  requesters = [\"eve\"]\n}",
			[]string{"e.hcl:3,", "Unknown user or agent", `"eve"`}},
		{"rule unknown kind", "rule \"r\" {\n  require_approval = true\n  kinds = [\"destroy\"]\n}",
			[]string{"e.hcl:3,", "Unknown kind", `"destroy"`, `"apply"`}},
		{"rule does nothing", "rule \"r\" {\n  templates = [\"net\"]\n}", []string{"e.hcl:1,", "Rule does nothing", "max_destroy"}},
		{"rule negative max_destroy", "rule \"r\" {\n  max_destroy = -1\n}", []string{"e.hcl:2,", "max_destroy = -1"}},
		{"rule fractional max_destroy", "rule \"r\" {\n  max_destroy = 1.5\n}", []string{"e.hcl:2,", "whole number", "1.5"}},
		{"rule missing plan_gate", "rule \"r\" {\n  plan_gate = \"policies/missing.rego\"\n}",
			[]string{"e.hcl:2,", "Policy file not found", filepath.Join(f.dir, "policies", "missing.rego")}},
		{"rule plan_gate directory", "rule \"r\" {\n  plan_gate = \"policies\"\n}", []string{"e.hcl:2,", "not a regular file"}},
		{"exemption unknown agent", "exemption \"e\" {\n  agents = [\"robot\"]\n}", []string{"e.hcl:2,", "Unknown agent", `"robot"`}},
		{"exemption names a user", "exemption \"e\" {\n  agents = [\"alice\"]\n}", []string{"e.hcl:2,", "User in an exemption"}},
		{"exemption unknown template", "exemption \"e\" {\n  agents = [\"bot\"]\n  templates = [\"web\"]\n}",
			[]string{"e.hcl:3,", "Unknown template", `"web"`}},
		{"exemption without agents", "exemption \"e\" {\n  templates = [\"net\"]\n}", []string{"e.hcl:1,", "Missing required argument", `"agents"`}},
		{"queue unknown pool", "queue \"q\" {\n  pool = \"us\"\n}", []string{"e.hcl:2,", "Unknown pool", `queue "q" names pool "us"`}},
		{"duplicate template", "template \"net\" {\n  project = \"infra\"\n  command = \"x\"\n}",
			[]string{"e.hcl:9,10:", "Duplicate name", `template "net" is already declared at e.hcl:1`}},
		{"duplicate survey field", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"a\" {}\n  survey \"a\" {}\n}",
			[]string{"e.hcl:5,", "Duplicate survey field", "e.hcl:4"}},
		{"user and agent same name", "agent \"alice\" {\n  public_key = \"" + mustKeyLine(t) + "\"\n}",
			[]string{"e.hcl:12,6:", "Duplicate name", `user "alice" has the name of the agent declared at e.hcl:1`}},
		{"absolute command", "template \"t\" {\n  project = \"infra\"\n  command = \"/etc\"\n}",
			[]string{"e.hcl:3,", "Invalid command", "is absolute"}},
		{"dotdot command", "template \"t\" {\n  project = \"infra\"\n  command = \"infra/../../etc\"\n}",
			[]string{"e.hcl:3,", "Invalid command", `contains ".."`}},
		{"backslash dotdot command", "template \"t\" {\n  project = \"infra\"\n  command = \"a\\\\..\\\\b\"\n}",
			[]string{"e.hcl:3,", `contains ".."`}},
		{"empty command", "template \"t\" {\n  project = \"infra\"\n  command = \"\"\n}", []string{"e.hcl:3,", "command is empty"}},
		{"bad public key", "user \"carol\" {\n  public_key = \"ssh-ed25519 AAAAnotakey\"\n}",
			[]string{"e.hcl:2,", "Invalid public key", `user "carol"`}},
		{"bad public key in list", "agent \"a\" {\n  public_keys = [\"" + mustKeyLine(t) + "\", \"garbage\"]\n}",
			[]string{"e.hcl:2,", "Invalid public key", `"garbage"`}},
		{"bad worker key", "pool \"p\" {\n  workers = [\"ssh-rsa xyz\"]\n}", []string{"e.hcl:2,", "Invalid public key", `pool "p"`}},
		{"user without key", "user \"carol\" {\n  roles = [\"launch\"]\n}", []string{"e.hcl:1,", "Missing public key"}},
		{"user with both key forms", "user \"carol\" {\n  public_key = \"x\"\n  public_keys = [\"y\"]\n}", []string{"e.hcl:2,", "Both public_key and public_keys"}},
		{"key shared by user and agent", "agent \"a2\" {\n  public_key = \"" + f.aliceLine + "\"\n}",
			[]string{"e.hcl:13,16:", "Public key used twice", `agent "a2" (e.hcl:2)`}},
		{"unknown role", "user \"carol\" {\n  public_key = \"" + mustKeyLine(t) + "\"\n  roles = [\"admin\"]\n}",
			[]string{"e.hcl:3,", "Unknown role", `"admin"`}},
		{"bad check_every", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  check_every = \"6 hours\"\n}",
			[]string{"e.hcl:4,", "Invalid duration", `check_every = "6 hours"`}},
		{"both check_every and check_cron", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  check_every = \"6h\"\n  check_cron = \"0 */6 * * *\"\n}",
			[]string{"e.hcl:5,", "Two schedules", "both check_every (e.hcl:4) and check_cron", "keep one"}},
		{"bad check_cron", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  check_cron = \"0 24 * * *\"\n}",
			[]string{"e.hcl:4,", "Invalid check_cron", `hour field "24" has 24, out of range: give 0 to 23`}},
		{"six-field check_cron", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  check_cron = \"0 0 */6 * * *\"\n}",
			[]string{"e.hcl:4,", "Invalid check_cron", "has 6 fields"}},
		{"unknown time_zone", "server {\n  time_zone = \"Mars/Olympus\"\n}", []string{"e.hcl:2,", "Unknown time zone", `"Mars/Olympus"`, "Europe/Paris"}},
		{"local time_zone", "server {\n  time_zone = \"Local\"\n}", []string{"e.hcl:2,", "Unknown time zone", "not the host's local zone"}},
		{"empty time_zone", "server {\n  time_zone = \"\"\n}", []string{"e.hcl:2,", "Unknown time zone"}},
		{"bad cancel_grace", "server {\n  cancel_grace = \"soon\"\n}", []string{"e.hcl:2,", "Invalid duration", "cancel_grace"}},
		{"negative duration", "server {\n  cancel_grace = \"-5s\"\n}", []string{"e.hcl:2,", "longer than zero"}},
		{"max_parallel zero", "server {\n  max_parallel = 0\n}", []string{"e.hcl:2,", "max_parallel = 0", "1 or more"}},
		{"bad ssh_listen", "server {\n  ssh_listen = \"localhost\"\n}", []string{"e.hcl:2,", "HOST:PORT"}},
		{"duplicate server", "server {}\nserver {}", []string{"e.hcl:2,", "Duplicate server block", "e.hcl:1"}},
		{"unknown tool", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  tool = \"tofu\"\n}",
			[]string{"e.hcl:4,", "Unknown tool", `"tofu"`, `"opentofu"`}},
		{"unknown survey type", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"n\" {\n    type = \"integer\"\n  }\n}",
			[]string{"e.hcl:5,", "Unknown survey type", `"integer"`, "choice"}},
		{"wrong default type", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"count\" {\n    type = \"number\"\n    default = \"three\"\n  }\n}",
			[]string{"e.hcl:6,", "Wrong default", `survey field "count" has type "number" but its default is string`}},
		{"bool default for list", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"l\" {\n    type = \"list\"\n    default = true\n  }\n}",
			[]string{"e.hcl:6,", "Wrong default", `type "list"`}},
		{"choice default not a choice", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"s\" {\n    type = \"choice\"\n    choices = [\"a\", \"b\"]\n    default = \"c\"\n  }\n}",
			[]string{"e.hcl:7,", "not one of its choices"}},
		{"choice without choices", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"s\" {\n    type = \"choice\"\n  }\n}",
			[]string{"e.hcl:4,", "Missing choices"}},
		{"choices on a string", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  survey \"s\" {\n    choices = [\"a\"]\n  }\n}",
			[]string{"e.hcl:5,", "Unexpected choices"}},
		{"survey field shadows var", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  vars = { region = \"a\" }\n  survey \"region\" {}\n}",
			[]string{"e.hcl:5,", "shadows a var"}},
		{"null var", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  vars = { a = { b = null } }\n}",
			[]string{"e.hcl:4,", "vars.a.b is null; give a value or remove it"}},
		{"variable reference", "template \"t\" {\n  project = \"infra\"\n  command = var.dir\n}",
			[]string{"e.hcl:3,", "Variables not allowed", "write the value itself"}},
		{"project path missing", "project \"p\" {\n  path = \"nowhere\"\n}",
			[]string{"e.hcl:2,", "Project path not found", filepath.Join(f.dir, "nowhere")}},
		{"project path is a file", "project \"p\" {\n  path = \"afile\"\n}", []string{"e.hcl:2,", "not a directory"}},
		{"credential with two sources", "credential \"c\" {\n  token = \"a\"\n  env = { A = \"b\" }\n}",
			[]string{"e.hcl:1,", "several sources", "env and token"}},
		{"credential without source", "credential \"c\" {}", []string{"e.hcl:1,", "without a source"}},
		{"command credential without env_var", "credential \"c\" {\n  command = [\"vault\"]\n}", []string{"e.hcl:1,", "Missing env_var"}},
		{"env_var without command", "credential \"c\" {\n  token = \"a\"\n  env_var = \"X\"\n}", []string{"e.hcl:3,", "Unexpected env_var"}},
		{"bad env name", "credential \"c\" {\n  env = { \"1BAD\" = \"x\" }\n}", []string{"e.hcl:2,", "not an environment variable name"}},
		{"env value not a string", "credential \"c\" {\n  env = { A = 1 }\n}", []string{"e.hcl:2,", "wants a string"}},
		{"wrong attribute type", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  credentials = \"cloud\"\n}",
			[]string{"e.hcl:4,", "Wrong type", "list of strings"}},
		{"bad name", "template \"a b\" {\n  project = \"infra\"\n  command = \"x\"\n}", []string{"e.hcl:1,10:", "Invalid name"}},
		{"bad delivery key", "pool \"p\" {\n  delivery_key = \"AGE-SECRET-KEY-1XYZ\"\n}", []string{"e.hcl:2,", "Invalid delivery key", "switchtender keygen pool"}},
		// DESIGN.md's sketch writes several attributes in one single-line
		// block; HCL refuses that with a message pointing at the line.
		{"single-line block with two attributes", `rule "prod" { templates = ["net"], require_approval = true }`,
			[]string{"e.hcl:1,", "single"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.src+"\n"+prelude), "e.hcl", f.dir)
			if err == nil {
				t.Fatalf("no error; config %+v", cfg)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, want *Error: %v", err, err)
			}
			msg := err.Error()
			if testing.Verbose() {
				t.Log(msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			// one mistake, one message (the prelude is valid)
			if n := strings.Count(msg, "\n") + 1; n != 1 {
				t.Errorf("want 1 message, got %d:\n%s", n, msg)
			}
		})
	}
}

// TestErrorsCollected checks that every problem of a file is reported at once.
func TestErrorsCollected(t *testing.T) {
	src := "template \"t\" {\n  project = \"nope\"\n  command = \"/abs\"\n  tool = \"x\"\n}\nwidget {}\n"
	_, err := Parse([]byte(src), "m.hcl", t.TempDir())
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, w := range []string{"m.hcl:6,1: Unsupported block type", "m.hcl:3,", "is absolute", "m.hcl:4,", "Unknown tool"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
}

func mustKeyLine(t *testing.T) string {
	_, line := newKey(t, "")
	return line
}

// A pool's delivery_key that is an SSH public key parses as a key, but the
// seal package seals only to age recipients: it is refused at load, not at
// the first run.
func TestDeliveryKeyMustBeAnAgeRecipient(t *testing.T) {
	src := "pool \"p\" {\n  delivery_key = \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEMqYtaU1fgGeV5t8wMv6bMMjC1C8b4XhSiXqaUXDs1H\"\n}\n"
	if _, err := Parse([]byte(src), "p.hcl", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not an age recipient") {
		t.Fatalf("an SSH delivery_key: %v", err)
	}
}
