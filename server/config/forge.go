package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Forge types a forge block may name (its `type`): the same words as the
// forge package's Types, in the same order (a test holds the two lists
// together; the forge package is not imported here, so that loading a
// configuration does not link the forges' client libraries).
const (
	ForgeGitea  = "gitea"
	ForgeGitHub = "github"
	ForgeGitLab = "gitlab"
)

// ForgeTypes lists every forge type, in the order docs and errors name them.
var ForgeTypes = []string{ForgeGitea, ForgeGitHub, ForgeGitLab}

// Forge settings' defaults and bounds.
const (
	// DefaultPollEvery is poll_every left out: how often a forge's open and
	// recently merged pull requests are listed.
	DefaultPollEvery = 5 * time.Minute
	// MinPollEvery is the shortest poll_every: each poll is a few API
	// calls per project, and forges rate-limit tokens.
	MinPollEvery = 30 * time.Second
	// MinWebhookSecret is the shortest webhook_secret, in characters.
	MinWebhookSecret = 16
)

var forgeSchema = &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema{{Name: "type", Required: true}, {Name: "url", Required: true}},
	attrs("token", "token_command", "webhook_secret", "poll_every")...)}

// repoSegmentRE is one segment of a repository path as Gitea, GitHub and
// GitLab allow it in an owner, group or repository name.
var repoSegmentRE = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*$`)

// projectForge is a project's forge and repository as written, checked
// against the forge blocks once the whole file is read.
type projectForge struct {
	project *Project
	forge   ref
	repo    ref
}

// forge decodes a forge block; nil when it does not decode. Every problem
// of the block is reported in the same pass.
func (p *parser) forge(b *hcl.Block, name string) *Forge {
	c := p.content(b, forgeSchema)
	f := &Forge{Name: name, PollEvery: DefaultPollEvery, Line: p.line(b.DefRange)}
	good := p.forgeType(c, f)
	good = p.forgeURL(c, f) && good
	good = p.forgeToken(b, c, f) && good
	good = p.forgeSecret(b, c, f) && good
	good = p.forgePoll(c, f) && good
	if !good {
		return nil
	}
	return f
}

// forgeType reads type: one of ForgeTypes.
func (p *parser) forgeType(c *hcl.BodyContent, f *Forge) bool {
	v, a, ok := p.str(c, "type")
	if !ok {
		return false
	}
	if !slices.Contains(ForgeTypes, v) {
		p.errorf(a.Expr.Range(), "Unknown forge type",
			"forge %q: type = %q; write \"gitea\", \"github\" or \"gitlab\", the forge that hosts the repositories", f.Name, v)
		return false
	}
	f.Type = v
	return true
}

// forgeURL reads url, the forge's API base: an absolute http or https URL
// with a host and no user name, password, query or fragment. The URL is not
// repeated in a message: one with a password in it is a secret.
func (p *parser) forgeURL(c *hcl.BodyContent, f *Forge) bool {
	v, a, ok := p.str(c, "url")
	if !ok {
		return false
	}
	u, err := url.Parse(v)
	problem := ""
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		problem = "must be an absolute http:// or https:// URL with a host, like \"https://git.example.com\""
	case u.User != nil:
		problem = "holds a user name or password; take it out and give the token in token or token_command"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		problem = "has a query or fragment; give the API base only, like \"https://git.example.com\""
	case f.Type == ForgeGitHub && strings.EqualFold(u.Hostname(), "github.com"):
		problem = "names github.com, whose API is elsewhere; give \"https://api.github.com\" (or a GitHub Enterprise URL, \"https://HOST/api/v3\")"
	}
	if problem != "" {
		p.errorf(a.Expr.Range(), "Invalid forge URL", "forge %q: url %s", f.Name, problem)
		return false
	}
	f.URL = v
	return true
}

// forgeToken reads token or token_command: exactly one of them.
func (p *parser) forgeToken(b *hcl.Block, c *hcl.BodyContent, f *Forge) bool {
	tok, ta, tokOK := p.str(c, "token")
	cmd, ca, cmdOK := p.argv(c, "token_command", fmt.Sprintf("forge %q", f.Name), `["pass", "show", "gitea/switchtender"]`)
	switch {
	case ta == nil && ca == nil:
		p.errorf(b.DefRange, "Forge without a token",
			"forge %q needs token = \"...\" or token_command = [\"pass\", \"show\", \"gitea/switchtender\"] (run when the token is needed; its trimmed output is the token): the token reads the repository, posts commit statuses and writes comments", f.Name)
		return false
	case ta != nil && ca != nil:
		p.errorf(ca.NameRange, "Two tokens",
			"forge %q sets both token (%s) and token_command; keep one of them", f.Name, p.line(ta.NameRange))
		return false
	case ta != nil && tokOK && tok == "":
		p.errorf(ta.Expr.Range(), "Empty token", "forge %q has an empty token; give the token, or use token_command", f.Name)
		return false
	}
	f.Token, f.TokenCommand = tok, cmd
	return (ta == nil || tokOK) && (ca == nil || cmdOK)
}

// forgeSecret reads webhook_secret: required (a delivery is verified with
// it before anything reads it), MinWebhookSecret characters or more.
func (p *parser) forgeSecret(b *hcl.Block, c *hcl.BodyContent, f *Forge) bool {
	v, a, ok := p.str(c, "webhook_secret")
	switch {
	case a == nil:
		p.errorf(b.DefRange, "Missing webhook_secret",
			"forge %q has no webhook_secret: no secret, no endpoint (a delivery is verified with it before anything reads it); add webhook_secret = \"...\", %d or more characters such as the output of `openssl rand -hex 32`, and give the forge's webhook the same secret", f.Name, MinWebhookSecret)
		return false
	case !ok:
		return false
	case len([]rune(v)) < MinWebhookSecret:
		p.errorf(a.Expr.Range(), "Weak webhook_secret",
			"forge %q: webhook_secret is %d characters; give %d or more (such as the output of `openssl rand -hex 32`)", f.Name, len([]rune(v)), MinWebhookSecret)
		return false
	}
	f.WebhookSecret = v
	return true
}

// forgePoll reads poll_every: a duration of MinPollEvery or more.
func (p *parser) forgePoll(c *hcl.BodyContent, f *Forge) bool {
	v, a, ok := p.str(c, "poll_every")
	if !ok {
		return a == nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < MinPollEvery {
		p.errorf(a.Expr.Range(), "Invalid poll_every",
			"forge %q: poll_every = %q; give a duration of at least %s, like \"5m\" (the default): each poll lists the forge's open and recently merged pull requests", f.Name, v, MinPollEvery)
		return false
	}
	f.PollEvery = d
	return true
}

// projectForge reads a project's forge, repository and allow_forks: forge
// and repository both or neither; repository a path of segments, checked
// against its forge's type once every forge is read (checkForges).
func (p *parser) projectForge(b *hcl.Block, c *hcl.BodyContent, pr *Project) bool {
	good := true
	if v, ok := p.boolean(c, "allow_forks"); ok {
		pr.AllowForks = v
	} else if c.Attributes["allow_forks"] != nil {
		good = false
	}
	fv, fa, fok := p.str(c, "forge")
	rv, ra, rok := p.str(c, "repository")
	switch {
	case fa == nil && ra == nil:
		if a := c.Attributes["allow_forks"]; a != nil {
			p.errorf(a.NameRange, "allow_forks without a forge",
				"project %q sets allow_forks but names no forge; add forge and repository, or remove allow_forks", pr.Name)
			return false
		}
		return good
	case fa != nil && ra == nil:
		p.errorf(fa.NameRange, "Forge without a repository",
			"project %q names forge %q but no repository; add repository = \"owner/name\", the repository its checkout is a clone of", pr.Name, fv)
		return false
	case fa == nil:
		p.errorf(ra.NameRange, "Repository without a forge",
			"project %q names repository %q but no forge; add forge = \"NAME\", the forge block of the forge that hosts it", pr.Name, rv)
		return false
	case !fok || !rok:
		return false
	}
	if problem := repositoryShape(rv); problem != "" {
		p.errorf(ra.Expr.Range(), "Invalid repository", "project %q: repository = %q %s", pr.Name, rv, problem)
		return false
	}
	pr.Forge, pr.Repository = fv, rv
	p.projForges = append(p.projForges, projectForge{project: pr, forge: ref{fv, fa.Expr.Range()}, repo: ref{rv, ra.Expr.Range()}})
	return good
}

// repositoryShape is what is wrong with a repository path whatever its
// forge ("" when nothing is): segments separated by "/", each a name the
// forges allow, no ".git" at the end.
func repositoryShape(repo string) string {
	if strings.HasSuffix(strings.ToLower(repo), ".git") {
		return "ends in .git; write the repository's path without it, like \"platform/infra\""
	}
	segs := strings.Split(repo, "/")
	if len(segs) < 2 {
		return "is not \"owner/name\"; write the owner (or group) and the repository's name, like \"platform/infra\""
	}
	for _, s := range segs {
		if !repoSegmentRE.MatchString(s) || s == "." || s == ".." {
			return "is not \"owner/name\": each part holds letters, digits, '_', '.' and '-', with one '/' between parts, like \"platform/infra\""
		}
	}
	return ""
}

// checkForges checks what spans blocks: each project's forge is declared
// and its repository has the shape that forge's type allows (Gitea and
// GitHub "owner/name", GitLab also nested groups "a/b/c"); no two projects
// name one repository of one forge (the forges compare repository names
// without case); a template with pull_requests = true belongs to a project
// with a forge; webhook_listen serves a declared forge.
func (p *parser) checkForges(cfg *Config) {
	seen := map[string]*Project{}
	for _, pf := range p.projForges {
		what := fmt.Sprintf("project %q", pf.project.Name)
		if !p.has("forge", pf.forge.name) {
			p.missing(pf.forge, what, "forge", "add a forge block for it or fix the name")
			continue
		}
		if f := cfg.Forges[pf.forge.name]; f != nil && f.Type != ForgeGitLab && strings.Count(pf.repo.name, "/") != 1 {
			p.errorf(pf.repo.rng, "Invalid repository",
				"%s: repository = %q has nested groups, which only GitLab has; forge %q is %s, so write \"owner/name\"", what, pf.repo.name, f.Name, f.Type)
		}
		key := pf.forge.name + " " + strings.ToLower(pf.repo.name)
		if prev := seen[key]; prev != nil {
			p.errorf(pf.repo.rng, "Repository named twice",
				"%s names repository %q of forge %q, which project %q (%s) already names; a repository's pull requests plan one project, so remove one of them or merge the two", what, pf.repo.name, pf.forge.name, prev.Name, prev.Line)
			continue
		}
		seen[key] = pf.project
	}
	p.checkPullRequests(cfg)
	if p.webhookListen != nil && len(p.declared["forge"]) == 0 {
		p.errorf(*p.webhookListen, "webhook_listen serves nothing",
			"webhook_listen is set but no forge block is declared, so it would serve nothing (deliveries go to /webhooks/FORGE); add a forge block or remove webhook_listen")
	}
}

// checkPullRequests reports each template with pull_requests = true whose
// project names no forge.
func (p *parser) checkPullRequests(cfg *Config) {
	for _, t := range cfg.Templates {
		refs := p.tmplRefs[t]
		pr := cfg.Projects[t.Project]
		if refs == nil || refs.pullRequests == nil || pr == nil || pr.Forge != "" {
			continue
		}
		p.errorf(*refs.pullRequests, "Pull requests without a forge",
			"template %q sets pull_requests = true, but its project %q (%s) names no forge, so no pull request could reach it; add forge and repository to the project, or remove pull_requests", t.Name, pr.Name, pr.Line)
	}
}

// templatePullRequests reads pull_requests.
func (p *parser) templatePullRequests(c *hcl.BodyContent, t *Template, refs *templateRefs) bool {
	v, ok := p.boolean(c, "pull_requests")
	a := c.Attributes["pull_requests"]
	if !ok {
		return a == nil
	}
	t.PullRequests = v
	if v {
		r := a.NameRange
		refs.pullRequests = &r
	}
	return true
}

// ForgeSecrets is every secret the configuration's forge blocks hold in
// clear: each forge's token as written and its webhook_secret, each once,
// in no particular order. A token_command's output is not among them: it
// is known only when the command runs, and whoever runs it masks it.
func (c *Config) ForgeSecrets() []string {
	var out []string
	for _, f := range c.Forges {
		for _, s := range []string{f.Token, f.WebhookSecret} {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// TokenCredential is the forge's token_command as a command credential,
// for the server's resolver of command credentials (run with the server's
// environment, at most a minute, its trimmed stdout the token); nil when
// the forge's token is written in the file (Token).
func (f *Forge) TokenCredential() *Credential {
	if len(f.TokenCommand) == 0 {
		return nil
	}
	return &Credential{Name: "forge " + f.Name, Command: f.TokenCommand, Line: f.Line}
}
