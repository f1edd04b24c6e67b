package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/switchtender/switchtender/gate"
)

// Worker is a relay worker's configuration file (`switchtender worker
// --config worker.hcl`): one worker block and a project block for each
// checkout on the worker.
type Worker struct {
	// Name identifies the worker in `workers` and in a run's show; it
	// defaults to the host name.
	Name string
	// Control is the control node's SSH address, "HOST:PORT".
	Control string
	// Pool is the pool whose queues the worker takes runs from.
	Pool string
	// Key is the worker's SSH private key file; the pool's workers list
	// names its public key.
	Key string
	// DeliveryIdentity is the pool's age identity file (`keygen pool`):
	// what is sealed to the pool's delivery_key opens with it.
	DeliveryIdentity string
	// DataDir holds the worker's run directories (mode 0700).
	DataDir string
	// KnownHosts is an OpenSSH known_hosts file holding the control node's
	// host key (as ssh-keyscan writes it).
	KnownHosts string
	// Projects are the checkouts on the worker, by the names the control
	// node's templates use.
	Projects map[string]*Project
}

var (
	workerRootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "worker"},
		{Type: "project", LabelNames: []string{"name"}},
	}}
	workerSchema = &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema{
		{Name: "control", Required: true}, {Name: "pool", Required: true}, {Name: "key", Required: true},
		{Name: "known_hosts", Required: true}, {Name: "data_dir", Required: true}},
		attrs("delivery_identity", "name")...)}
)

// LoadWorker reads and checks a worker's configuration file. Relative paths
// resolve against the file's directory; errors are *Error, one line per
// problem with file:line.
func LoadWorker(path string) (*Worker, error) {
	src, err := gate.ReadConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading worker config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving worker config path %s: %w", path, err)
	}
	return ParseWorker(src, path, filepath.Dir(abs))
}

// ParseWorker parses a worker's configuration source (see LoadWorker).
func ParseWorker(src []byte, filename, baseDir string) (*Worker, error) {
	abs, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, fmt.Errorf("resolving worker config directory %s: %w", baseDir, err)
	}
	p := &parser{filename: filename, baseDir: abs, declared: map[string]map[string]hcl.Range{}}
	w := p.parseWorker(src)
	if p.diags.HasErrors() {
		return nil, &Error{Diagnostics: p.diags}
	}
	return w, nil
}

func (p *parser) parseWorker(src []byte) *Worker {
	if !p.checkBounds(src) {
		return nil
	}
	file, diags := hclsyntax.ParseConfig(src, p.filename, hcl.InitialPos)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	content, diags := file.Body.Content(workerRootSchema)
	p.diags = append(p.diags, explain(diags, "worker configuration file", workerRootSchema)...)
	w := &Worker{Projects: map[string]*Project{}}
	var seen *hcl.Block
	for _, b := range content.Blocks {
		switch {
		case b.Type == "worker" && seen != nil:
			p.errorf(b.DefRange, "Duplicate worker block", "a worker file has one worker block; the first is at %s", p.line(seen.DefRange))
		case b.Type == "worker":
			seen = b
			p.workerBlock(b, w)
		case p.declare(b):
			if pr := p.project(b, b.Labels[0]); pr != nil {
				w.Projects[pr.Name] = pr
			}
		}
	}
	if seen == nil {
		p.diags = append(p.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing worker block",
			Detail: fmt.Sprintf("%s has no worker block; add worker { control = \"HOST:PORT\", pool, key, known_hosts, data_dir }", p.filename)})
	}
	if seen != nil && len(w.Projects) == 0 {
		p.errorf(seen.DefRange, "No project", "a worker runs tofu in project checkouts; add a project \"NAME\" { path = \"...\" } block for each, named as on the control node")
	}
	return w
}

func (p *parser) workerBlock(b *hcl.Block, w *Worker) {
	c := p.content(b, workerSchema)
	if v, a, ok := p.str(c, "control"); ok {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			p.errorf(a.Expr.Range(), "Invalid control address", "control = %q is not HOST:PORT; give the control node's SSH address, such as \"switchtender.internal:2222\"", v)
		} else {
			w.Control = v
		}
	}
	if v, a, ok := p.str(c, "pool"); ok {
		if !nameRE.MatchString(v) {
			p.errorf(a.Expr.Range(), "Invalid pool name", "pool = %q is not a pool name as the control node's pool blocks write it", v)
		}
		w.Pool = v
	}
	if v, _, ok := p.str(c, "name"); ok && v != "" {
		w.Name = v
	} else if h, err := os.Hostname(); err == nil {
		w.Name = h
	}
	w.Key = p.existingFile(c, "key", "the worker's SSH private key (ssh-keygen -t ed25519 -N '' -f FILE); list its .pub in the pool's workers")
	w.KnownHosts = p.existingFile(c, "known_hosts", "the control node's host key as `ssh-keyscan -p PORT HOST > FILE` writes it")
	w.DeliveryIdentity = p.existingFile(c, "delivery_identity", "the pool's delivery identity, written by `switchtender keygen pool --out FILE`")
	if v, a, ok := p.str(c, "data_dir"); ok {
		if v == "" {
			p.errorf(a.Expr.Range(), "Empty path", "data_dir is empty; give the directory the worker keeps its run directories in")
		}
		w.DataDir = p.resolve(v)
	}
}

// existingFile reads a path attribute that must name a readable regular
// file; what says what the file is, for the message.
func (p *parser) existingFile(c *hcl.BodyContent, name, what string) string {
	v, a, ok := p.str(c, name)
	if !ok {
		return ""
	}
	path := p.resolve(v)
	fi, err := os.Stat(path)
	switch {
	case v == "":
		p.errorf(a.Expr.Range(), "Empty path", "%s is empty; give %s", name, what)
	case errors.Is(err, os.ErrNotExist):
		p.errorf(a.Expr.Range(), "File not found", "%s %s does not exist; give %s", name, path, what)
	case err != nil:
		p.errorf(a.Expr.Range(), "File cannot be read", "%s %s: %v", name, path, err)
	case fi.IsDir():
		p.errorf(a.Expr.Range(), "Not a file", "%s %s is a directory; give %s", name, path, what)
	default:
		return path
	}
	return ""
}
