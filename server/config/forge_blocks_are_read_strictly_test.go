package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// forgePrelude is a valid file with a forge, a project that names it, a
// project that names none and a template that plans pull requests: the
// cases below come before it, so their lines are the file's first lines.
const forgePrelude = `
forge "corp" {
  type           = "gitea"
  url            = "https://git.example.com"
  token          = "tok-forge-0123456789"
  webhook_secret = "0123456789abcdef"
}
project "infra" {
  path       = "CHECKOUT"
  forge      = "corp"
  repository = "platform/infra"
}
project "plain" {
  path = "CHECKOUT"
}
template "net" {
  project       = "infra"
  command       = "net"
  pull_requests = true
}
`

// forgeBlock is a forge block named name with one attribute line changed:
// set is written in place of the attribute it names (or added), and an
// attribute given as "-NAME" is left out.
func forgeBlock(name string, set ...string) string {
	lines := map[string]string{
		"type":           `type = "gitea"`,
		"url":            `url = "https://git.example.com"`,
		"token":          `token = "tok-forge-0123456789"`,
		"webhook_secret": `webhook_secret = "0123456789abcdef"`,
	}
	order := []string{"type", "url", "token", "webhook_secret"}
	for _, s := range set {
		if strings.HasPrefix(s, "-") {
			delete(lines, s[1:])
			continue
		}
		key := strings.TrimSpace(strings.SplitN(s, "=", 2)[0])
		if _, ok := lines[key]; !ok {
			order = append(order, key)
		}
		lines[key] = s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "forge %q {\n", name)
	for _, k := range order {
		if l, ok := lines[k]; ok {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("}")
	return b.String()
}

// TestAForgesMistakesAreEachNamedAtTheirLine parses each case's snippet
// before forgePrelude and checks the one error names f.hcl:LINE,COL, what
// is wrong and what to do.
func TestAForgesMistakesAreEachNamedAtTheirLine(t *testing.T) {
	f := newFixture(t)
	prelude := strings.ReplaceAll(forgePrelude, "CHECKOUT", f.checkout)
	if _, err := Parse([]byte(prelude), "f.hcl", f.dir); err != nil {
		t.Fatalf("the prelude does not parse: %v", err)
	}
	project := func(body string) string {
		return "project \"p\" {\n  path = \"" + f.checkout + "\"\n" + body + "}"
	}
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown type", forgeBlock("x", `type = "bitbucket"`),
			[]string{"f.hcl:2,10:", "Unknown forge type", `type = "bitbucket"`, `"gitea", "github" or "gitlab"`}},
		{"no type", forgeBlock("x", "-type"), []string{"f.hcl:1,", "Missing required argument", `"type"`, "Add it to the forge block"}},
		{"no url", forgeBlock("x", "-url"), []string{"f.hcl:1,", "Missing required argument", `"url"`}},
		{"no webhook_secret", forgeBlock("x", "-webhook_secret"),
			[]string{"f.hcl:1,1:", "Missing webhook_secret", "no secret, no endpoint", "openssl rand -hex 32"}},
		{"short webhook_secret", forgeBlock("x", `webhook_secret = "0123456789abcde"`),
			[]string{"f.hcl:5,20:", "Weak webhook_secret", "15 characters", "16 or more"}},
		{"both token and token_command", forgeBlock("x", `token_command = ["pass", "show", "gitea"]`),
			[]string{"f.hcl:6,3:", "Two tokens", "both token (f.hcl:4) and token_command", "keep one"}},
		{"neither token nor token_command", forgeBlock("x", "-token"),
			[]string{"f.hcl:1,1:", "Forge without a token", "token_command"}},
		{"empty token", forgeBlock("x", `token = ""`), []string{"f.hcl:4,11:", "Empty token"}},
		{"empty token_command", forgeBlock("x", "-token", `token_command = []`),
			[]string{"f.hcl:5,", "Empty command", `forge "x" has an empty token_command`, `["pass", "show", "gitea/switchtender"]`}},
		{"token_command with no program", forgeBlock("x", "-token", `token_command = ["", "x"]`),
			[]string{"f.hcl:5,", "Empty command", "starts with an empty program name"}},
		{"token_command not a list", forgeBlock("x", "-token", `token_command = "pass show gitea"`),
			[]string{"f.hcl:5,", "Wrong type", "list of strings"}},
		{"url not http", forgeBlock("x", `url = "ftp://git.example.com"`),
			[]string{"f.hcl:3,9:", "Invalid forge URL", "absolute http:// or https:// URL with a host"}},
		{"url without host", forgeBlock("x", `url = "https:///api"`), []string{"f.hcl:3,", "Invalid forge URL", "with a host"}},
		{"url relative", forgeBlock("x", `url = "git.example.com"`), []string{"f.hcl:3,", "Invalid forge URL"}},
		{"url with userinfo", forgeBlock("x", `url = "https://bot:hunter2hunter2@git.example.com"`),
			[]string{"f.hcl:3,", "Invalid forge URL", "user name or password", "token or token_command"}},
		{"url with query", forgeBlock("x", `url = "https://git.example.com/?token=abc"`),
			[]string{"f.hcl:3,", "Invalid forge URL", "query or fragment", "API base only"}},
		{"url with fragment", forgeBlock("x", `url = "https://git.example.com/#top"`), []string{"f.hcl:3,", "query or fragment"}},
		{"github url of the web site", forgeBlock("x", `type = "github"`, `url = "https://github.com"`),
			[]string{"f.hcl:3,", "Invalid forge URL", `"https://api.github.com"`}},
		{"poll_every under the minimum", forgeBlock("x", `poll_every = "10s"`),
			[]string{"f.hcl:6,16:", "Invalid poll_every", `poll_every = "10s"`, "at least 30s", `"5m"`}},
		{"poll_every not a duration", forgeBlock("x", `poll_every = "often"`), []string{"f.hcl:6,", "Invalid poll_every", "at least 30s"}},
		{"poll_every negative", forgeBlock("x", `poll_every = "-5m"`), []string{"f.hcl:6,", "Invalid poll_every", "at least 30s"}},
		{"poll_every not a string", forgeBlock("x", `poll_every = 300`), []string{"f.hcl:6,", "Wrong type", "poll_every"}},
		{"unknown attribute", forgeBlock("x", `secret = "0123456789abcdef"`),
			[]string{"f.hcl:6,3:", "Unsupported argument", `"secret"`, "a forge block takes type, url, token, token_command, webhook_secret, poll_every"}},
		{"bad forge name", strings.Replace(forgeBlock("x"), `"x"`, `"my forge"`, 1), []string{"f.hcl:1,7:", "Invalid name", `forge name "my forge"`}},
		{"duplicate forge name", forgeBlock("corp"), []string{"f.hcl:8,7:", "Duplicate name", `forge "corp" is already declared at f.hcl:1`}},
		{"project names an undeclared forge", project("  forge = \"nope\"\n  repository = \"a/b\"\n"),
			[]string{"f.hcl:3,11:", "Unknown forge", `project "p" names forge "nope", which is not declared`, "add a forge block"}},
		{"forge without repository", project("  forge = \"corp\"\n"),
			[]string{"f.hcl:3,3:", "Forge without a repository", `add repository = "owner/name"`}},
		{"repository without forge", project("  repository = \"platform/web\"\n"),
			[]string{"f.hcl:3,3:", "Repository without a forge", `add forge = "NAME"`}},
		{"allow_forks without forge", project("  allow_forks = true\n"), []string{"f.hcl:3,3:", "allow_forks without a forge"}},
		{"allow_forks not a bool", project("  forge = \"corp\"\n  repository = \"platform/web\"\n  allow_forks = \"no\"\n"),
			[]string{"f.hcl:5,", "Wrong type", "allow_forks wants true or false"}},
		{"repository without owner", project("  forge = \"corp\"\n  repository = \"web\"\n"),
			[]string{"f.hcl:4,16:", "Invalid repository", `repository = "web" is not "owner/name"`}},
		{"repository with .git", project("  forge = \"corp\"\n  repository = \"platform/web.git\"\n"),
			[]string{"f.hcl:4,", "Invalid repository", "ends in .git"}},
		{"repository with an empty part", project("  forge = \"corp\"\n  repository = \"platform//web\"\n"),
			[]string{"f.hcl:4,", "Invalid repository", `is not "owner/name"`}},
		{"repository as a URL", project("  forge = \"corp\"\n  repository = \"https://git.example.com/platform/web\"\n"),
			[]string{"f.hcl:4,", "Invalid repository"}},
		{"repository with a space", project("  forge = \"corp\"\n  repository = \"platform/my web\"\n"), []string{"f.hcl:4,", "Invalid repository"}},
		{"nested groups off GitLab", project("  forge = \"corp\"\n  repository = \"platform/net/web\"\n"),
			[]string{"f.hcl:4,16:", "Invalid repository", "nested groups, which only GitLab has", `forge "corp" is gitea`}},
		{"pull_requests without a forge", "template \"t\" {\n  project = \"plain\"\n  command = \"x\"\n  pull_requests = true\n}",
			[]string{"f.hcl:4,3:", "Pull requests without a forge", `template "t" sets pull_requests = true, but its project "plain"`, "add forge and repository"}},
		{"pull_requests not a bool", "template \"t\" {\n  project = \"infra\"\n  command = \"x\"\n  pull_requests = 1\n}",
			[]string{"f.hcl:4,", "Wrong type", "pull_requests wants true or false"}},
		{"webhook_listen not host:port", "server {\n  webhook_listen = \"8443\"\n}",
			[]string{"f.hcl:2,20:", "Invalid listen address", `webhook_listen = "8443" must be HOST:PORT`, `"127.0.0.1:8443"`}},
		{"webhook_listen with a bad port", "server {\n  webhook_listen = \"127.0.0.1:http\"\n}", []string{"f.hcl:2,", "Invalid listen address", "0 to 65535"}},
		{"ssh_address with a scheme", "server {\n  ssh_address = \"ssh://st.example.com\"\n}",
			[]string{"f.hcl:2,17:", "Invalid ssh_address", `"HOST" or "HOST:PORT"`}},
		{"ssh_address with a bad port", "server {\n  ssh_address = \"st.example.com:0\"\n}", []string{"f.hcl:2,", "Invalid ssh_address", "1 to 65535"}},
		{"ssh_address with a user", "server {\n  ssh_address = \"alice@st.example.com\"\n}", []string{"f.hcl:2,", "Invalid ssh_address", "no scheme, user"}},
		{"ssh_address empty", "server {\n  ssh_address = \"\"\n}", []string{"f.hcl:2,", "Invalid ssh_address"}},
		{"ssh_address not a host", "server {\n  ssh_address = \"st_example!:22\"\n}", []string{"f.hcl:2,", "Invalid ssh_address", "not a host name or IP address"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := wantOneError(t, tc.src+"\n"+prelude, f.dir, tc.want)
			// No message repeats a secret: a token, a webhook secret
			// (too short or not), a password in a URL.
			for _, secret := range []string{"tok-forge-0123456789", "0123456789abcde", "hunter2hunter2"} {
				if strings.Contains(msg, secret) {
					t.Errorf("the message repeats the secret %q:\n%s", secret, msg)
				}
			}
		})
	}
}

// wantOneError parses src as f.hcl and checks it gives exactly one error
// holding every one of want.
func wantOneError(t *testing.T, src, dir string, want []string) string {
	t.Helper()
	cfg, err := Parse([]byte(src), "f.hcl", dir)
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
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 1 {
		t.Errorf("want 1 message, got %d:\n%s", n, msg)
	}
	return msg
}

// The later of two projects naming one repository of one forge is named,
// with the earlier one's line; the forges compare repository names without
// case, so a different case is the same repository.
func TestTwoProjectsCannotNameOneRepository(t *testing.T) {
	f := newFixture(t)
	prelude := strings.ReplaceAll(forgePrelude, "CHECKOUT", f.checkout)
	src := prelude + "project \"infra2\" {\n  path = \"" + f.checkout + "\"\n  forge = \"corp\"\n  repository = \"Platform/Infra\"\n}\n"
	line := strings.Count(prelude, "\n") + 4 // the repository line of infra2
	wantOneError(t, src, f.dir, []string{
		fmt.Sprintf("f.hcl:%d,16:", line), "Repository named twice",
		`project "infra2" names repository "Platform/Infra" of forge "corp", which project "infra" (f.hcl:8) already names`, "remove one of them",
	})
	// Another forge's repository of the same name is another repository.
	other := src[:strings.Index(src, "project \"infra2\"")] + forgeBlock("other") + "\n" +
		"project \"infra2\" {\n  path = \"" + f.checkout + "\"\n  forge = \"other\"\n  repository = \"platform/infra\"\n}\n"
	if _, err := Parse([]byte(other), "f.hcl", f.dir); err != nil {
		t.Fatalf("one repository name on two forges: %v", err)
	}
}

// webhook_listen with no forge block would serve nothing: an error at its
// line that says so.
func TestAWebhookListenerWithNoForgeIsRefused(t *testing.T) {
	src := "server {\n  ssh_listen = \"127.0.0.1:2222\"\n  webhook_listen = \"127.0.0.1:8443\"\n}\n"
	wantOneError(t, src, t.TempDir(), []string{"f.hcl:3,3:", "webhook_listen serves nothing", "no forge block is declared", "add a forge block or remove webhook_listen"})
}

// Every problem of a forge block, and of a project naming it, is reported
// in the one pass, each at its own line.
func TestEveryForgeProblemIsReportedAtOnce(t *testing.T) {
	dir := t.TempDir()
	src := "forge \"x\" {\n  type = \"svn\"\n  url = \"ftp://h\"\n  poll_every = \"1s\"\n}\n" +
		"project \"p\" {\n  path = \"nowhere\"\n  forge = \"y\"\n  repository = \"a/b\"\n}\n"
	_, err := Parse([]byte(src), "m.hcl", dir)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, w := range []string{
		"m.hcl:2,10: Unknown forge type", "m.hcl:3,9: Invalid forge URL", "m.hcl:1,1: Forge without a token",
		"m.hcl:1,1: Missing webhook_secret", "m.hcl:4,16: Invalid poll_every", "m.hcl:7,10: Project path not found",
		`m.hcl:8,11: Unknown forge; project "p" names forge "y"`,
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
}

// A worker's file is the control node's business only as far as paths go:
// a forge in a worker's project block is an unknown attribute there.
func TestAWorkersProjectTakesNoForge(t *testing.T) {
	dir := t.TempDir()
	src := "worker {\n  control = \"cn:2222\"\n  pool = \"eu\"\n  key = \"k\"\n  known_hosts = \"kh\"\n  data_dir = \"d\"\n}\n" +
		"project \"infra\" {\n  path = \"" + dir + "\"\n  forge = \"corp\"\n}\n"
	_, err := ParseWorker([]byte(src), "w.hcl", dir)
	if err == nil || !strings.Contains(err.Error(), "w.hcl:10,3: Unsupported argument") || !strings.Contains(err.Error(), "a project block takes path.") {
		t.Fatalf("a worker's project with a forge: %v", err)
	}
}
