package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/forge"
)

// A file with forges of each kind parses into the fields the forge side
// reads: the server's webhook_listen and ssh_address, each forge's type,
// url, token or token_command, webhook secret and poll interval (default
// 5m), each project's forge, repository (GitLab's nested groups included)
// and allow_forks, each template's pull_requests.
func TestForgeBlocksFillTheirFields(t *testing.T) {
	f := newFixture(t)
	src := strings.ReplaceAll(`server {
  webhook_listen = "127.0.0.1:8443"
  ssh_address    = "switchtender.example.com:2222"
}
forge "corp" {
  type           = "gitea"
  url            = "https://git.example.com"
  token          = "tok-gitea-0123456789"
  webhook_secret = "whsec-gitea-0123456789"
}
forge "lab" {
  type           = "gitlab"
  url            = "https://gitlab.example.com/"
  token_command  = ["pass", "show", "gitlab"]
  webhook_secret = "whsec-gitlab-0123456789"
  poll_every     = "2m"
}
forge "hub" {
  type           = "github"
  url            = "https://api.github.com"
  token          = "ghp_0123456789abcdef"
  webhook_secret = "whsec-github-0123456789"
}
project "infra" {
  path        = "CHECKOUT"
  forge       = "corp"
  repository  = "platform/infra"
  allow_forks = true
}
project "deep" {
  path       = "CHECKOUT"
  forge      = "lab"
  repository = "group/sub/deep"
}
project "dotted" {
  path       = "CHECKOUT"
  forge      = "hub"
  repository = "acme/.github"
}
project "same-name-elsewhere" {
  path       = "CHECKOUT"
  forge      = "lab"
  repository = "platform/infra"
}
project "plain" {
  path = "CHECKOUT"
}
template "network" {
  project       = "infra"
  command       = "network"
  pull_requests = true
}
template "manual" {
  project = "infra"
  command = "manual"
}
`, "CHECKOUT", f.checkout)
	cfg, err := Parse([]byte(src), "good.hcl", f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.WebhookListen != "127.0.0.1:8443" || cfg.Server.SSHAddress != "switchtender.example.com:2222" {
		t.Errorf("server: webhook_listen %q, ssh_address %q", cfg.Server.WebhookListen, cfg.Server.SSHAddress)
	}
	want := map[string]*Forge{
		"corp": {Name: "corp", Type: ForgeGitea, URL: "https://git.example.com", Token: "tok-gitea-0123456789",
			WebhookSecret: "whsec-gitea-0123456789", PollEvery: 5 * time.Minute, Line: "good.hcl:5"},
		"lab": {Name: "lab", Type: ForgeGitLab, URL: "https://gitlab.example.com/", TokenCommand: []string{"pass", "show", "gitlab"},
			WebhookSecret: "whsec-gitlab-0123456789", PollEvery: 2 * time.Minute, Line: "good.hcl:11"},
		"hub": {Name: "hub", Type: ForgeGitHub, URL: "https://api.github.com", Token: "ghp_0123456789abcdef",
			WebhookSecret: "whsec-github-0123456789", PollEvery: DefaultPollEvery, Line: "good.hcl:18"},
	}
	if !reflect.DeepEqual(cfg.Forges, want) {
		for name, w := range want {
			t.Errorf("forge %s:\n got %+v\nwant %+v", name, cfg.Forges[name], w)
		}
	}
	projects := map[string][3]any{
		"infra": {"corp", "platform/infra", true}, "deep": {"lab", "group/sub/deep", false}, "dotted": {"hub", "acme/.github", false},
		"same-name-elsewhere": {"lab", "platform/infra", false}, "plain": {"", "", false},
	}
	for name, w := range projects {
		p := cfg.Projects[name]
		if got := [3]any{p.Forge, p.Repository, p.AllowForks}; got != w {
			t.Errorf("project %s: forge, repository, allow_forks = %v, want %v", name, got, w)
		}
	}
	if !cfg.Templates["network"].PullRequests || cfg.Templates["manual"].PullRequests {
		t.Errorf("pull_requests: network %v, manual %v", cfg.Templates["network"].PullRequests, cfg.Templates["manual"].PullRequests)
	}
}

// A forge with no webhook_listen is polled only: the file loads, and the
// server block's forge settings stay at their defaults (no listener; the
// comment's commands name ssh_listen).
func TestAForgeWithoutAWebhookListenerLoads(t *testing.T) {
	f := newFixture(t)
	cfg, err := Parse([]byte(forgeBlock("corp")+"\n"), "poll.hcl", f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.WebhookListen != "" || cfg.Server.SSHAddress != "" || cfg.Forges["corp"] == nil {
		t.Errorf("webhook_listen %q, ssh_address %q, forges %v", cfg.Server.WebhookListen, cfg.Server.SSHAddress, cfg.Forges)
	}
}

// The types a forge block may name are the forge package's, in its order.
func TestForgeTypesAreTheForgePackagesTypes(t *testing.T) {
	var theirs []string
	for _, ty := range forge.Types {
		theirs = append(theirs, string(ty))
	}
	if !slices.Equal(ForgeTypes, theirs) {
		t.Fatalf("config.ForgeTypes %v, forge.Types %v", ForgeTypes, theirs)
	}
}

// The secrets a forge block holds in clear are each token as written and
// each webhook secret, once each; a token_command's output is not known
// at load. TokenCredential is a token_command as a command credential.
func TestForgeSecretsAreEveryTokenAndWebhookSecretInTheFile(t *testing.T) {
	f := newFixture(t)
	src := forgeBlock("a", `token = "tok-a-0123456789"`, `webhook_secret = "whsec-a-0123456789"`) + "\n" +
		forgeBlock("b", "-token", `token_command = ["pass", "show", "b"]`, `webhook_secret = "whsec-b-0123456789"`) + "\n" +
		forgeBlock("c", `token = "tok-a-0123456789"`, `webhook_secret = "whsec-a-0123456789"`) + "\n"
	cfg, err := Parse([]byte(src), "s.hcl", f.dir)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.ForgeSecrets()
	slices.Sort(got)
	if want := []string{"tok-a-0123456789", "whsec-a-0123456789", "whsec-b-0123456789"}; !slices.Equal(got, want) {
		t.Errorf("ForgeSecrets = %q, want %q", got, want)
	}
	if c := cfg.Forges["a"].TokenCredential(); c != nil {
		t.Errorf("forge a writes its token, yet TokenCredential = %+v", c)
	}
	c := cfg.Forges["b"].TokenCredential()
	if c == nil || !slices.Equal(c.Command, []string{"pass", "show", "b"}) || c.Name != "forge b" || c.Line != "s.hcl:7" {
		t.Errorf("forge b's TokenCredential = %+v", c)
	}
}
