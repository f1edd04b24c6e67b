// Package config loads the HCL configuration of `switchtender serve --config FILE`.
//
// The file's shape is the one sketched in DESIGN.md ("A configuration sketch"):
// one optional server block, and project, credential, template, queue, pool,
// rule, exemption, user and agent blocks, each labelled with its name.
// Parsing is strict: an unknown block or attribute, a value of the wrong type,
// a reference to something not declared, or a name declared twice is an error
// that names FILE:LINE,COL, what is wrong and what to do. All problems found in
// one pass are reported together (see Error).
//
// Expressions are evaluated with no variables and no functions, so the file is
// plain data: strings, numbers, bools, lists and objects. HCL allows one
// attribute in a single-line block, so DESIGN.md's
// `rule "prod" { templates = [...], require_approval = true }` is written with
// one attribute per line.
//
// Decisions beyond DESIGN.md's sketch:
//   - Names (block labels) match [A-Za-z0-9][A-Za-z0-9_.-]*; survey field
//     names and vars keys are HCL identifiers (they become TF_VAR_NAME).
//   - Users and agents share one set of names; an SSH key belongs to at most
//     one user, agent or pool worker, so Identify is never ambiguous.
//   - A rule sets at least one of max_destroy, plan_gate and
//     require_approval = true (otherwise it could never hold a run); its
//     approvers are users holding the approve role; its requesters are users
//     or agents.
//   - An exemption names at least one agent (agents is required), and only
//     agents.
//   - A survey field may not share its name with a template var.
//   - Numbers keep their exact decimal text as json.Number ("-0" reads "0").
//   - A pool's delivery_key is an age X25519 recipient ("age1..."), as
//     `switchtender keygen pool` prints it.
//   - A list answer is JSON when it starts with "[", else comma-separated
//     strings (see SurveyField.ParseAnswer).
//   - A forge block (forge.go) has exactly one of token and token_command
//     and a webhook_secret of 16 or more characters; a project names a
//     forge and a repository together or neither, and no two projects name
//     one repository of one forge (compared without case, as the forges
//     do); webhook_listen with no forge block is an error (it would serve
//     nothing), a forge with no webhook_listen is not (it is polled).
//   - Whether a forge project's checkout is a clone of its repository is
//     not read at load (it runs git): CheckClone says, and the server's
//     judgement (check, serve, reload) refuses a configuration it fails.
//
// A Config is not modified after Parse returns, so it may be read from many
// goroutines at once.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/switchtender/switchtender/gate"
	"golang.org/x/crypto/ssh"
)

// Defaults applied when the server block leaves a setting out.
const (
	DefaultSSHListen   = "127.0.0.1:2222"
	DefaultMaxParallel = 2
	DefaultCancelGrace = 10 * time.Second
	DefaultQueue       = "default"
	DefaultTool        = ToolOpenTofu
)

// Tools a template may name (its `tool` attribute).
const (
	ToolOpenTofu  = "opentofu"
	ToolTerraform = "terraform"
)

// Run kinds a rule or exemption may name (its `kinds` attribute).
const (
	KindApply     = "apply"
	KindPlan      = "plan"
	KindCheck     = "check"
	KindReconcile = "reconcile"
)

// Roles a user may hold (its `roles` attribute).
const (
	RoleLaunch  = "launch"
	RoleApprove = "approve"
)

// Survey field types (a survey block's `type` attribute).
const (
	TypeString = "string"
	TypeNumber = "number"
	TypeBool   = "bool"
	TypeList   = "list"
	TypeMap    = "map"
	TypeChoice = "choice"
)

// Config is a loaded, validated configuration. Every cross reference in it
// (a template's project, queue and credentials, a rule's templates, projects,
// requesters and approvers, an exemption's agents and templates, a queue's
// pool) names something declared in the same file.
type Config struct {
	// Dir is the absolute directory relative paths in the file were resolved
	// against (the config file's directory for Load).
	Dir         string
	Server      Server
	Projects    map[string]*Project
	Templates   map[string]*Template
	Credentials map[string]*Credential
	// Queues always holds DefaultQueue ("default"), added with no pool (run by
	// the control node) when the file does not declare it.
	Queues     map[string]*Queue
	Pools      map[string]*Pool
	Rules      []*Rule // in file order
	Exemptions []*Exemption
	Users      map[string]*User
	Agents     map[string]*Agent
	// Notifies are the notify blocks: webhooks told of run events.
	Notifies map[string]*Notify
	// Forges are the forge blocks: the forges whose pull requests are
	// planned (docs/forges.md).
	Forges map[string]*Forge
	// UserCAs are the user_ca blocks: OpenSSH certificate authorities
	// whose user certificates log in without being listed
	// (docs/identity.md).
	UserCAs map[string]*UserCA
	// Groups are the group blocks: roles granted to their members and to
	// the certificates whose principals map to them.
	Groups map[string]*Group
}

// UserCA is one `user_ca "NAME"` block: a certificate authority whose user
// certificates identify people. A certificate's key ID names the person,
// its principals give their groups through Groups, and the groups give the
// roles.
type UserCA struct {
	Name string
	// PublicKey is the CA's key (public_key, or the first key of
	// public_key_file); no user, agent or worker holds it.
	PublicKey ssh.PublicKey
	// Groups maps a declared group to the principals that grant it; a
	// principal may grant several groups.
	Groups map[string][]string
	// Revoked is the absolute path of an OpenSSH key revocation list
	// (ssh-keygen -k); "" when none. It parsed at load; the identity
	// resolver reads it again whenever it changes.
	Revoked string
	Line    string
}

// GroupsOf returns the declared groups the principals grant, each with the
// first principal that grants it, in group name order.
func (ca *UserCA) GroupsOf(principals []string) []GroupGrant {
	var out []GroupGrant
	for _, g := range slices.Sorted(maps.Keys(ca.Groups)) {
		for _, p := range principals {
			if slices.Contains(ca.Groups[g], p) {
				out = append(out, GroupGrant{Group: g, Principal: p})
				break
			}
		}
	}
	return out
}

// GroupGrant is a group a certificate's principal grants.
type GroupGrant struct{ Group, Principal string }

// Group is one `group "NAME"` block: the roles it grants and the users
// listed as its members (a certificate's principals may grant it too).
type Group struct {
	Name    string
	Roles   []string // RoleLaunch, RoleApprove
	Members []string // declared users
	Line    string
}

// GroupsOfUser returns the names of the groups that list user as a member,
// in name order.
func (c *Config) GroupsOfUser(user string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Groups)) {
		if slices.Contains(c.Groups[name].Members, user) {
			out = append(out, name)
		}
	}
	return out
}

// IdentifyCA finds the user_ca block whose public key is key (compared by
// wire bytes); nil when none is.
func (c *Config) IdentifyCA(key ssh.PublicKey) *UserCA {
	if key == nil {
		return nil
	}
	want := key.Marshal()
	for _, name := range slices.Sorted(maps.Keys(c.UserCAs)) {
		if bytes.Equal(c.UserCAs[name].PublicKey.Marshal(), want) {
			return c.UserCAs[name]
		}
	}
	return nil
}

// Forge is one `forge "NAME"` block: a Gitea, GitHub or GitLab whose
// webhooks POST /webhooks/NAME on the server's webhook_listen. Exactly one
// of Token and TokenCommand is set; WebhookSecret is at least 16
// characters. Token, the output of TokenCommand and WebhookSecret are
// secrets: masked in every output, never stored, never in a process's
// arguments (ForgeSecrets lists those the file holds).
type Forge struct {
	Name          string
	Type          string   // ForgeGitea, ForgeGitHub or ForgeGitLab (as forge.Types)
	URL           string   // the API base as written: Gitea's and GitLab's root URL, https://api.github.com or an Enterprise URL; http or https, no user, query or fragment
	Token         string   // token, as written
	TokenCommand  []string // token_command: argv whose trimmed output is the token, run fresh when needed
	WebhookSecret string   // webhook_secret
	// PollEvery is poll_every: how often open and recently merged pull
	// requests are listed to catch up on lost deliveries (default 5m,
	// DefaultPollEvery; at least MinPollEvery).
	PollEvery time.Duration
	Line      string
}

// Server holds the `server` block; every field has a default.
type Server struct {
	SSHListen string // ssh_listen, host:port; default "127.0.0.1:2222"
	DataDir   string // data_dir, absolute; default "<config dir>/data"
	HostKey   string // host_key path, absolute; default DataDir/ssh_host_ed25519
	SealKey   string // seal_key path, absolute; default DataDir/seal.key
	// MaxParallel is how many runs in different working directories may
	// execute at once (max_parallel, >= 1, default 2).
	MaxParallel int
	// CancelGrace is the time between SIGINT and a kill when a run is
	// cancelled (cancel_grace, a Go duration such as "10s"; default 10s).
	CancelGrace time.Duration
	// AllowSelfApproval lets the user who launched a run approve it
	// (allow_self_approval, default false).
	AllowSelfApproval bool
	// SSH limits (docs/ssh-limits.md); zero means the server's default.
	SSHHandshakeTimeout  time.Duration // ssh_handshake_timeout, default 30s
	SSHIdleTimeout       time.Duration // ssh_idle_timeout, default 10m
	SSHMaxStartups       int           // ssh_max_startups: connections still in their handshake, default 64; one address may hold max(startups/4, min(startups/2, per_source/2))
	SSHMaxConns          int           // ssh_max_connections: in all, default 256
	SSHMaxConnsPerSource int           // ssh_max_connections_per_source: per address, default 32
	SSHMaxCommandBytes   int           // ssh_max_command_bytes, default 65536
	SSHMaxSessions       int           // ssh_max_sessions_per_connection: session channels open on one connection, default 10
	// TimeZone is time_zone, an IANA name such as "Europe/Paris": the wall
	// clock templates' check_cron is read in. Default UTC.
	TimeZone *time.Location
	// MetricsListen is metrics_listen, host:port of the HTTP listener for
	// /metrics, /healthz and /readyz; "" (the default) serves none.
	MetricsListen string
	// WebhookListen is webhook_listen, host:port of the plain-HTTP listener
	// forges deliver webhooks to (POST /webhooks/FORGE); "" serves none.
	// TLS is a reverse proxy's job.
	WebhookListen string
	// SSHAddress is ssh_address, how people reach the SSH server
	// ("host" or "host:port"), as the commands a pull request's comment
	// shows name it; "" when it is left out, and then ssh_listen (the
	// address the server listens on) is what they show.
	SSHAddress string
}

// Project is a checkout runs execute in. Path is absolute, and at load time
// it existed and was a directory.
type Project struct {
	Name string
	Path string
	// Forge names the forge block whose pull requests plan this project,
	// Repository the repository there ("owner/name", GitLab: the full
	// path), both empty or both set; the checkout at Path is a clone of it.
	Forge      string
	Repository string
	// AllowForks lets pull requests from forks be planned (allow_forks,
	// default false).
	AllowForks bool
	Line       string // "file:line" of the block
}

// Template is a launchable run: a working directory (Command, relative to
// the project's checkout) run with Tool on Queue.
type Template struct {
	Name    string
	Project string // a declared project
	Tool    string // ToolOpenTofu (default) or ToolTerraform
	// Command is the working directory relative to the project checkout,
	// cleaned with forward slashes ("." is the checkout itself). It is never
	// absolute and has no ".." element (a lexical check; the server checks
	// symlinks at run time, DESIGN.md invariant 4).
	Command     string
	Queue       string   // a declared queue; default "default"
	Credentials []string // declared credentials, in file order
	// Vars are the template vars: string, bool, json.Number, []any and
	// map[string]any (nested). Numbers keep their exact decimal text.
	Vars   map[string]any
	Survey []*SurveyField // file order
	// CheckEvery is check_every, e.g. "6h": a drift check is launched when
	// the template's newest check was created this long ago or more. 0 when
	// unset. At most one of CheckEvery and CheckCron is set; neither means no
	// scheduled drift checks.
	CheckEvery time.Duration
	// CheckCron is check_cron, e.g. "0 */6 * * *", read in the server's
	// time_zone (Server.TimeZone); nil when unset.
	CheckCron *Cron
	// PullRequests plans the pull requests of the project's forge that
	// touch Command or a local module it calls (pull_requests, default
	// false).
	PullRequests bool
	Line         string // "file:line" of the block
}

// SurveyField is one `survey "NAME" { ... }` block of a template: a question
// asked at launch, answered over SSH with --var NAME=VALUE.
type SurveyField struct {
	Name        string
	Type        string   // TypeString (default), TypeNumber, TypeBool, TypeList, TypeMap, TypeChoice
	Default     any      // typed like Template.Vars; nil when no default is given
	Required    bool     // true when no default is given
	Choices     []string // the allowed answers of a choice field; empty otherwise
	Description string
	Sensitive   bool // a secret answer: masked in logs, never shown
	Line        string
}

// Credential is one `credential` block. Exactly one of Env, Token and
// Command is set; Command comes with EnvVar, the variable its trimmed output
// is put in. The server resolves a Command credential fresh for every run and
// passes Token as SWITCHTENDER_TOKEN.
type Credential struct {
	Name    string
	Env     map[string]string
	Token   string
	Command []string
	EnvVar  string
	Line    string
}

// Queue is one `queue` block. An empty Pool means the control node executes
// the queue's runs; otherwise relay workers of that pool do.
type Queue struct {
	Name string
	Pool string
	Line string
}

// Pool is a group of relay workers. DeliveryKey is the age recipient plans
// and credentials are sealed to in transit (empty: the pool cannot run a
// gated apply). Workers holds the workers' public keys as written
// (authorized_keys lines); WorkerKeys the same keys parsed, in the same order.
type Pool struct {
	Name        string
	DeliveryKey string
	Workers     []string
	WorkerKeys  []ssh.PublicKey
	// LeaseTimeout is how long a worker may go without a heartbeat before
	// it loses its run's lease and the run fails (0: the default, 30 s).
	LeaseTimeout time.Duration
	Line         string
}

// Rule is one `rule` block. Empty Templates, Projects, Kinds or Requesters
// match everything. A rule does at least one of MaxDestroy, PlanGate and
// RequireApproval.
type Rule struct {
	Name       string
	Templates  []string // declared templates
	Projects   []string // declared projects
	Kinds      []string // KindApply, KindPlan, KindCheck, KindReconcile
	Requesters []string // declared users or agents
	MaxDestroy *int     // nil when unset; >= 0
	// PlanGate is the absolute path of a .rego file (resolved against the
	// config dir); it existed and was a regular file at load time.
	PlanGate        string
	RequireApproval bool
	// Approvers are declared users holding the approve role and
	// "group:NAME" for a declared group that grants it; empty: any
	// approver.
	Approvers []string
	// MinApprovals is how many different people among Approvers must
	// approve the same digest to release the rule's hold (min_approvals;
	// 1 when unset). The requester and agents never count.
	MinApprovals  int
	ExcludeDryRun bool
	Line          string
}

// Exemption lets the named agents' runs take the path a person's run takes
// (spec: "An apply an exemption covers takes the path above"). Agents is
// never empty; empty Templates or Kinds match everything.
type Exemption struct {
	Name      string
	Agents    []string
	Templates []string
	Kinds     []string
	Line      string
}

// User is a person who connects over SSH with one of PublicKeys.
type User struct {
	Name       string
	PublicKeys []ssh.PublicKey
	Roles      []string // RoleLaunch, RoleApprove
	Line       string
}

// Has reports whether the user holds role (RoleLaunch or RoleApprove).
func (u *User) Has(role string) bool {
	for _, r := range u.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// Agent is an automated client (an AI agent or a bot) connecting over SSH.
// Its runs are held by default unless an Exemption covers them.
type Agent struct {
	Name       string
	PublicKeys []ssh.PublicKey
	Line       string
}

// Identify finds the user or agent a public key belongs to, comparing the
// keys' wire bytes. It returns the name, whether it is an agent, and ok=false
// when no user or agent holds the key. Load guarantees a key belongs to at
// most one identity.
func (c *Config) Identify(key ssh.PublicKey) (name string, agent bool, ok bool) {
	if key == nil {
		return "", false, false
	}
	want := key.Marshal()
	for _, u := range c.Users {
		if hasKey(u.PublicKeys, want) {
			return u.Name, false, true
		}
	}
	for _, a := range c.Agents {
		if hasKey(a.PublicKeys, want) {
			return a.Name, true, true
		}
	}
	return "", false, false
}

// IdentifyWorker finds the pool whose workers list holds key (compared by
// wire bytes); ok is false when no pool does.
func (c *Config) IdentifyWorker(key ssh.PublicKey) (pool string, ok bool) {
	if key == nil {
		return "", false
	}
	want := key.Marshal()
	for _, p := range c.Pools {
		if hasKey(p.WorkerKeys, want) {
			return p.Name, true
		}
	}
	return "", false
}

func hasKey(keys []ssh.PublicKey, want []byte) bool {
	for _, k := range keys {
		if k != nil && bytes.Equal(k.Marshal(), want) {
			return true
		}
	}
	return false
}

// Error is what Load and Parse return for a file that does not parse or
// validate. Error() gives one line per problem, "FILE:LINE,COL: summary; detail".
type Error struct {
	Diagnostics hcl.Diagnostics
}

func (e *Error) Error() string {
	var lines []string
	for _, d := range e.Diagnostics {
		if d.Severity != hcl.DiagError {
			continue
		}
		lines = append(lines, FormatDiagnostic(d))
	}
	return strings.Join(lines, "\n")
}

// FormatDiagnostic renders d as "FILE:LINE,COL: summary; detail" (the
// location is left out when d has none, the detail when it is empty).
func FormatDiagnostic(d *hcl.Diagnostic) string {
	var b strings.Builder
	if d.Subject != nil {
		fmt.Fprintf(&b, "%s:%d,%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString("; ")
		b.WriteString(d.Detail)
	}
	return b.String()
}

// Load reads and parses the configuration file at path. Relative paths inside
// it (data_dir, project paths, plan_gate, host_key, seal_key) resolve against
// the file's directory. Messages name the file as path was given. A file that
// cannot be read gives a wrapped os error; a file that is wrong gives *Error.
func Load(path string) (*Config, error) {
	src, err := gate.ReadConfigFile(path) // regular, bounded, without blocking on a FIFO
	if errors.Is(err, gate.ErrTooDeep) || errors.Is(err, gate.ErrTooManyBlocks) {
		src, err = os.ReadFile(path) // Parse reports where, with file:line
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving config path %s: %w", path, err)
	}
	return Parse(src, path, filepath.Dir(abs))
}

// Parse parses configuration source. filename is used in messages only;
// relative paths resolve against baseDir (made absolute against the working
// directory when relative; the working directory itself when empty). Project
// paths and plan_gate files are checked on disk. Errors are *Error.
func Parse(src []byte, filename, baseDir string) (*Config, error) {
	if baseDir == "" {
		baseDir = "."
	}
	abs, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, fmt.Errorf("resolving config directory %s: %w", baseDir, err)
	}
	p := &parser{filename: filename, baseDir: abs}
	cfg := p.parse(src)
	if p.diags.HasErrors() {
		return nil, &Error{Diagnostics: p.diags}
	}
	return cfg, nil
}
