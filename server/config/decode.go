package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// nameRE is what a block label (a name) may look like: it is typed in SSH
// commands (`launch NAME`) and shown in the TUI.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// envRE is a portable environment variable name.
var envRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "server"},
	{Type: "project", LabelNames: []string{"name"}},
	{Type: "credential", LabelNames: []string{"name"}},
	{Type: "template", LabelNames: []string{"name"}},
	{Type: "queue", LabelNames: []string{"name"}},
	{Type: "pool", LabelNames: []string{"name"}},
	{Type: "rule", LabelNames: []string{"name"}},
	{Type: "exemption", LabelNames: []string{"name"}},
	{Type: "user", LabelNames: []string{"name"}},
	{Type: "agent", LabelNames: []string{"name"}},
	{Type: "notify", LabelNames: []string{"name"}},
	{Type: "forge", LabelNames: []string{"name"}},
}}

func attrs(names ...string) []hcl.AttributeSchema {
	out := make([]hcl.AttributeSchema, len(names))
	for i, n := range names {
		out[i] = hcl.AttributeSchema{Name: n}
	}
	return out
}

var (
	serverSchema = &hcl.BodySchema{Attributes: attrs("ssh_listen", "data_dir", "host_key", "seal_key", "max_parallel", "cancel_grace", "allow_self_approval",
		"ssh_handshake_timeout", "ssh_idle_timeout", "ssh_max_startups", "ssh_max_connections", "ssh_max_connections_per_source", "ssh_max_command_bytes",
		"ssh_max_sessions_per_connection", "time_zone", "metrics_listen", "webhook_listen", "ssh_address")}
	// projectSchema is the control node's project block; a worker's file
	// has workerProjectSchema's, a path only (its forge is the control
	// node's business).
	projectSchema       = &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema{{Name: "path", Required: true}}, attrs("forge", "repository", "allow_forks")...)}
	workerProjectSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "path", Required: true}}}
	credentialSchema    = &hcl.BodySchema{Attributes: attrs("env", "token", "command", "env_var")}
	templateSchema      = &hcl.BodySchema{
		Attributes: append([]hcl.AttributeSchema{{Name: "project", Required: true}, {Name: "command", Required: true}},
			attrs("tool", "queue", "credentials", "vars", "check_every", "check_cron", "pull_requests")...),
		Blocks: []hcl.BlockHeaderSchema{{Type: "survey", LabelNames: []string{"name"}}},
	}
	surveySchema    = &hcl.BodySchema{Attributes: attrs("type", "default", "choices", "description", "sensitive")}
	queueSchema     = &hcl.BodySchema{Attributes: attrs("pool")}
	poolSchema      = &hcl.BodySchema{Attributes: attrs("delivery_key", "workers", "lease_timeout")}
	ruleSchema      = &hcl.BodySchema{Attributes: attrs("templates", "projects", "kinds", "requesters", "max_destroy", "plan_gate", "require_approval", "approvers", "exclude_dry_run")}
	exemptionSchema = &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema{{Name: "agents", Required: true}}, attrs("templates", "kinds")...)}
	userSchema      = &hcl.BodySchema{Attributes: attrs("public_key", "public_keys", "roles")}
	agentSchema     = &hcl.BodySchema{Attributes: attrs("public_key", "public_keys")}
)

// ref is a name used somewhere, with where it was written, checked against
// the declarations once the whole file is read.
type ref struct {
	name string
	rng  hcl.Range
}

type parser struct {
	filename string
	baseDir  string
	diags    hcl.Diagnostics

	// where each name was declared, per kind, for "declared twice" messages
	declared map[string]map[string]hcl.Range

	// references, checked after all blocks are read
	tmplRefs  map[*Template]*templateRefs
	ruleRefs  map[*Rule]*ruleRefs
	exRefs    map[*Exemption]*exemptionRefs
	queueRefs map[*Queue]ref
	keyOwners map[string]keyOwner

	// the projects that name a forge, in file order, and where the server
	// block set webhook_listen (nil: it did not)
	projForges    []projectForge
	webhookListen *hcl.Range
}

type templateRefs struct {
	project     ref
	queue       ref
	credentials []ref
	// pullRequests is where pull_requests = true is written (nil: false
	// or left out)
	pullRequests *hcl.Range
}

type ruleRefs struct {
	templates, projects, requesters, approvers []ref
}

type exemptionRefs struct {
	agents, templates []ref
}

type keyOwner struct {
	what string // `user "alice"`
	rng  hcl.Range
}

func (p *parser) errorf(rng hcl.Range, summary, detailFormat string, args ...any) {
	r := rng
	p.diags = append(p.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detailFormat, args...),
		Subject:  &r,
	})
}

func (p *parser) line(rng hcl.Range) string {
	return fmt.Sprintf("%s:%d", rng.Filename, rng.Start.Line)
}

func (p *parser) parse(src []byte) *Config {
	cfg := &Config{
		Dir:         p.baseDir,
		Projects:    map[string]*Project{},
		Templates:   map[string]*Template{},
		Credentials: map[string]*Credential{},
		Queues:      map[string]*Queue{},
		Pools:       map[string]*Pool{},
		Users:       map[string]*User{},
		Agents:      map[string]*Agent{},
		Notifies:    map[string]*Notify{},
		Forges:      map[string]*Forge{},
	}
	p.declared = map[string]map[string]hcl.Range{}
	p.tmplRefs = map[*Template]*templateRefs{}
	p.ruleRefs = map[*Rule]*ruleRefs{}
	p.exRefs = map[*Exemption]*exemptionRefs{}
	p.queueRefs = map[*Queue]ref{}
	p.keyOwners = map[string]keyOwner{}

	if !p.checkBounds(src) {
		return nil
	}
	file, diags := hclsyntax.ParseConfig(src, p.filename, hcl.InitialPos)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	content, diags := file.Body.Content(rootSchema)
	p.diags = append(p.diags, explain(diags, "configuration file", rootSchema)...)
	if !p.checkBlockCount(content.Blocks) {
		return nil
	}

	cfg.Server = p.server(p.serverBlock(content.Blocks))

	// Users and agents first so duplicate-key and user/agent name clashes
	// are reported against the later block in file order regardless of kind.
	for _, b := range content.Blocks {
		if b.Type != "server" && p.declare(b) {
			p.block(cfg, b)
		}
	}
	if _, ok := cfg.Queues[DefaultQueue]; !ok {
		cfg.Queues[DefaultQueue] = &Queue{Name: DefaultQueue}
	}
	p.checkRefs(cfg)
	return cfg
}

// serverBlock finds the one server block (nil when there is none),
// reporting any further one.
func (p *parser) serverBlock(blocks hcl.Blocks) *hcl.Block {
	var serverBlock *hcl.Block
	for _, b := range blocks {
		if b.Type != "server" {
			continue
		}
		if serverBlock != nil {
			p.errorf(b.DefRange, "Duplicate server block",
				"a server block is already at %s; merge the two into one", p.line(serverBlock.DefRange))
			continue
		}
		serverBlock = b
	}
	return serverBlock
}

// block decodes a declared block other than server into cfg; a block that
// does not decode is left out.
func (p *parser) block(cfg *Config, b *hcl.Block) {
	name := b.Labels[0]
	switch b.Type {
	case "project":
		put(cfg.Projects, name, p.controlProject(b, name))
	case "credential":
		put(cfg.Credentials, name, p.credential(b, name))
	case "template":
		put(cfg.Templates, name, p.template(b, name))
	case "queue":
		put(cfg.Queues, name, p.queue(b, name))
	case "pool":
		put(cfg.Pools, name, p.pool(b, name))
	case "rule":
		add(&cfg.Rules, p.rule(b, name))
	case "exemption":
		add(&cfg.Exemptions, p.exemption(b, name))
	case "user":
		put(cfg.Users, name, p.user(b, name))
	case "agent":
		put(cfg.Agents, name, p.agent(b, name))
	case "notify":
		put(cfg.Notifies, name, p.notify(b, name))
	case "forge":
		put(cfg.Forges, name, p.forge(b, name))
	}
}

// put stores v under name unless it is nil (did not decode).
func put[T any](m map[string]*T, name string, v *T) {
	if v != nil {
		m[name] = v
	}
}

// add appends v unless it is nil (did not decode).
func add[T any](list *[]*T, v *T) {
	if v != nil {
		*list = append(*list, v)
	}
}

// declare records a block's name, reporting a bad name, a name declared twice
// for the same kind, and a user and an agent sharing a name. It reports
// whether the block should be decoded.
// ReservedIdentityNames are names the server acts under itself: no user or
// agent may take one, or its runs and audit entries would pass for the
// server's (scheduled checks are launched as "schedule"; the server records
// itself as "switchtender"; "rules" releases what no rule holds).
var ReservedIdentityNames = []string{"schedule", "switchtender", "rules"}

func (p *parser) declare(b *hcl.Block) bool {
	name := b.Labels[0]
	lrng := b.LabelRanges[0]
	if !nameRE.MatchString(name) {
		p.errorf(lrng, "Invalid name",
			"%s name %q must start with a letter or digit and hold only letters, digits, '_', '.' and '-'; rename it", b.Type, name)
		return false
	}
	kind := b.Type
	if p.declared[kind] == nil {
		p.declared[kind] = map[string]hcl.Range{}
	}
	if prev, ok := p.declared[kind][name]; ok {
		p.errorf(lrng, "Duplicate name",
			"%s %q is already declared at %s; give one of them another name", kind, name, p.line(prev))
		return false
	}
	if (kind == "user" || kind == "agent") && slices.Contains(ReservedIdentityNames, name) {
		p.errorf(lrng, "Reserved name",
			"%s name %q is the server's own (it launches scheduled drift checks and records itself in the audit trail); give the %s another name", kind, name, kind)
		return false
	}
	// Users and agents share one set of names: both are who launched a run.
	other := map[string]string{"user": "agent", "agent": "user"}[kind]
	if prev, ok := p.declared[other][name]; ok && other != "" {
		p.errorf(lrng, "Duplicate name",
			"%s %q has the name of the %s declared at %s; users and agents share one set of names, so rename one", kind, name, other, p.line(prev))
		return false
	}
	p.declared[kind][name] = b.DefRange
	return true
}

func (p *parser) content(b *hcl.Block, schema *hcl.BodySchema) *hcl.BodyContent {
	content, diags := b.Body.Content(schema)
	p.diags = append(p.diags, explain(diags, b.Type+" block", schema)...)
	return content
}

// explain adds what to do to HCL's own schema diagnostics, which say only
// what is wrong.
func explain(diags hcl.Diagnostics, where string, schema *hcl.BodySchema) hcl.Diagnostics {
	var allowedAttrs, allowedBlocks []string
	for _, a := range schema.Attributes {
		allowedAttrs = append(allowedAttrs, a.Name)
	}
	for _, b := range schema.Blocks {
		allowedBlocks = append(allowedBlocks, b.Type)
	}
	for _, d := range diags {
		var add string
		switch d.Summary {
		case "Unsupported argument":
			if len(allowedAttrs) == 0 {
				add = fmt.Sprintf("Remove it; a %s takes no arguments.", where)
			} else {
				add = fmt.Sprintf("Remove it or fix its name; a %s takes %s.", where, strings.Join(allowedAttrs, ", "))
			}
		case "Unsupported block type":
			if len(allowedBlocks) == 0 {
				add = fmt.Sprintf("Remove it; a %s holds no blocks.", where)
			} else {
				add = fmt.Sprintf("Remove it or fix its type; a %s holds %s blocks.", where, strings.Join(allowedBlocks, ", "))
			}
		case "Missing required argument":
			add = fmt.Sprintf("Add it to the %s.", where)
		}
		if add != "" {
			d.Detail = strings.TrimSpace(d.Detail + " " + add)
		}
	}
	return diags
}

// value evaluates an attribute with no variables or functions. A null value
// reads as absent (ok=false).
func (p *parser) value(a *hcl.Attribute) (cty.Value, bool) {
	v, diags := a.Expr.Value(nil)
	for _, d := range diags {
		if d.Summary == "Variables not allowed" || d.Summary == "Function calls not allowed" {
			d.Detail += " The configuration is plain data: write the value itself, in double quotes for a string."
		}
	}
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() || v.IsNull() {
		return cty.NilVal, false
	}
	return v, true
}

func (p *parser) str(c *hcl.BodyContent, name string) (string, *hcl.Attribute, bool) {
	a, ok := c.Attributes[name]
	if !ok {
		return "", nil, false
	}
	v, ok := p.value(a)
	if !ok {
		return "", a, false
	}
	if v.Type() != cty.String {
		p.errorf(a.Expr.Range(), "Wrong type",
			"%s wants a string in double quotes, got %s", name, v.Type().FriendlyName())
		return "", a, false
	}
	return v.AsString(), a, true
}

func (p *parser) boolean(c *hcl.BodyContent, name string) (bool, bool) {
	a, ok := c.Attributes[name]
	if !ok {
		return false, false
	}
	v, ok := p.value(a)
	if !ok {
		return false, false
	}
	if v.Type() != cty.Bool {
		p.errorf(a.Expr.Range(), "Wrong type", "%s wants true or false, got %s", name, v.Type().FriendlyName())
		return false, false
	}
	return v.True(), true
}

func (p *parser) integer(c *hcl.BodyContent, name string) (int, *hcl.Attribute, bool) {
	a, ok := c.Attributes[name]
	if !ok {
		return 0, nil, false
	}
	v, ok := p.value(a)
	if !ok {
		return 0, a, false
	}
	if v.Type() != cty.Number {
		p.errorf(a.Expr.Range(), "Wrong type", "%s wants a whole number, got %s", name, v.Type().FriendlyName())
		return 0, a, false
	}
	f := v.AsBigFloat()
	i, acc := f.Int64()
	if !f.IsInt() || acc != 0 || int64(int(i)) != i {
		p.errorf(a.Expr.Range(), "Wrong type", "%s wants a whole number, got %s", name, f.Text('f', -1))
		return 0, a, false
	}
	return int(i), a, true
}

// strList reads a list of strings, returning each element with its own range
// when the list is written literally (so messages point at the element).
func (p *parser) strList(c *hcl.BodyContent, name string) ([]ref, *hcl.Attribute, bool) {
	a, ok := c.Attributes[name]
	if !ok {
		return nil, nil, false
	}
	v, ok := p.value(a)
	if !ok {
		return nil, a, false
	}
	t := v.Type()
	if !t.IsListType() && !t.IsTupleType() && !t.IsSetType() {
		p.errorf(a.Expr.Range(), "Wrong type", "%s wants a list of strings like [\"a\", \"b\"], got %s", name, t.FriendlyName())
		return nil, a, false
	}
	var elemRanges []hcl.Range
	if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		for _, e := range tuple.Exprs {
			elemRanges = append(elemRanges, e.Range())
		}
	}
	var out []ref
	i := 0
	good := true
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		rng := a.Expr.Range()
		if i < len(elemRanges) {
			rng = elemRanges[i]
		}
		if ev.IsNull() || ev.Type() != cty.String {
			p.errorf(rng, "Wrong type", "%s wants a list of strings; element %d is %s", name, i+1, ev.Type().FriendlyName())
			good = false
			continue
		}
		out = append(out, ref{name: ev.AsString(), rng: rng})
	}
	return out, a, good
}

func names(refs []ref) []string {
	if len(refs) == 0 {
		return nil
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.name
	}
	return out
}

func (p *parser) duration(c *hcl.BodyContent, name string) (time.Duration, *hcl.Attribute, bool) {
	s, a, ok := p.str(c, name)
	if !ok {
		return 0, a, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		p.errorf(a.Expr.Range(), "Invalid duration",
			"%s = %q does not parse as a duration; write it like \"90s\", \"10m\" or \"6h\"", name, s)
		return 0, a, false
	}
	if d <= 0 {
		p.errorf(a.Expr.Range(), "Invalid duration", "%s = %q must be longer than zero", name, s)
		return 0, a, false
	}
	return d, a, true
}

func (p *parser) resolve(s string) string {
	if !filepath.IsAbs(s) {
		s = filepath.Join(p.baseDir, s)
	}
	return filepath.Clean(s)
}

// project decodes a worker file's project block: a path only.
func (p *parser) project(b *hcl.Block, name string) *Project {
	return p.projectPath(b, p.content(b, workerProjectSchema), name)
}

// controlProject decodes the control node's project block: its path and
// the forge repository it is a clone of (forge, repository, allow_forks).
func (p *parser) controlProject(b *hcl.Block, name string) *Project {
	c := p.content(b, projectSchema)
	pr := p.projectPath(b, c, name)
	if pr == nil {
		p.projectForge(b, c, &Project{Name: name}) // its problems too, in the same pass
		return nil
	}
	if !p.projectForge(b, c, pr) {
		return nil
	}
	return pr
}

// projectPath reads path: an existing directory, resolved against the
// configuration's directory. nil when it is not one.
func (p *parser) projectPath(b *hcl.Block, c *hcl.BodyContent, name string) *Project {
	v, a, ok := p.str(c, "path")
	if !ok {
		return nil
	}
	if v == "" {
		p.errorf(a.Expr.Range(), "Empty path", "project %q has an empty path; give the directory of its checkout", name)
		return nil
	}
	abs := p.resolve(v)
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		p.errorf(a.Expr.Range(), "Project path not found",
			"project %q path %s cannot be used (%v); check out the repository there or fix the path", name, abs, err)
		return nil
	case !fi.IsDir():
		p.errorf(a.Expr.Range(), "Project path is not a directory",
			"project %q path %s is a file; give the directory of the checkout", name, abs)
		return nil
	}
	return &Project{Name: name, Path: abs, Line: p.line(b.DefRange)}
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func (p *parser) noDuplicates(rs []ref, attr string) bool {
	seen := map[string]bool{}
	good := true
	for _, r := range rs {
		if seen[r.name] {
			p.errorf(r.rng, "Duplicate entry", "%s lists %q twice; remove one", attr, r.name)
			good = false
		}
		seen[r.name] = true
	}
	return good
}

func (p *parser) queue(b *hcl.Block, name string) *Queue {
	c := p.content(b, queueSchema)
	q := &Queue{Name: name, Line: p.line(b.DefRange)}
	if v, a, ok := p.str(c, "pool"); ok {
		q.Pool = v
		p.queueRefs[q] = ref{v, a.Expr.Range()}
	} else if a != nil {
		return nil
	}
	return q
}
