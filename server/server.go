// Package server is Switchtender's control node: it loads the configuration,
// keeps the queue of runs and their state machine, executes OpenTofu and
// Terraform through package exec, gates applies through package gate, seals
// saved plans through package seal, and persists everything through package
// store. Its front door (SSH commands, MCP and the terminal UI) is package
// server/sshd, which reaches the service through the interface it declares;
// Attach tells the service about the door, so /readyz follows it.
//
// The behaviour it implements is specified in spec/opentofu-runs.txt ("OpenTofu
// runs"); section names quoted in comments refer to that text.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/logs"
	"github.com/switchtender/switchtender/server/metrics"
	"github.com/switchtender/switchtender/server/notify"
	"github.com/switchtender/switchtender/server/oplog"
	"github.com/switchtender/switchtender/server/schedule"
	"github.com/switchtender/switchtender/server/sshd/identity"
	"github.com/switchtender/switchtender/store"
)

// Options are what New needs besides the configuration.
type Options struct {
	// Environ is the environment runs inherit from (normally os.Environ());
	// its PATH must reach the tool binaries (spec "Requirements").
	Environ []string
	// Logger receives operator detail; nil discards it.
	Logger *slog.Logger
	// PolicyTimeout bounds one Rego evaluation; 0 means 10 s.
	PolicyTimeout time.Duration
	// NotifyBackoff is the wait before a failed notification's first retry;
	// it doubles per attempt up to 5 min. 0 means 1 s.
	NotifyBackoff time.Duration
	// NotifyTimeout bounds one notification attempt. 0 means 10 s.
	NotifyTimeout time.Duration
	// LeaseTimeouts maps a pool's name to the lease timeout its workers'
	// leases get, in place of the pool's lease_timeout (or the 30 s
	// default): how long a worker may go without a heartbeat before its
	// run is failed. Pools it does not name, or names with 0 or less, keep
	// their configured one. It is for embedders and tests that need a
	// timeout the configuration file does not say; nil changes nothing.
	LeaseTimeouts map[string]time.Duration

	// SSH limits (see docs/ssh-limits.md). Zero or negative means the
	// default; none can be turned off.

	// SSHHandshakeTimeout is how long a connection may take from accept to
	// an accepted, proven public key before it is closed: OpenSSH's
	// LoginGraceTime. 0 means 30 s.
	SSHHandshakeTimeout time.Duration
	// SSHMaxStartups is how many connections may be in their handshake (not
	// yet authenticated) at once; past it a new connection is closed at
	// accept, before the SSH banner, as OpenSSH's MaxStartups does (without
	// its random early drop). 0 means 64. One source address may hold
	// max(SSHMaxStartups/4, min(SSHMaxStartups/2, SSHMaxConnsPerSource/2))
	// of them (16 with the defaults).
	SSHMaxStartups int
	// SSHMaxConns caps open SSH connections, authenticated or not; past it a
	// new connection is closed at accept. 0 means 256. At start it is
	// lowered, with a warning, to half the process's RLIMIT_NOFILE soft
	// limit, so that connections never take the descriptors runs need.
	SSHMaxConns int
	// SSHMaxConnsPerSource caps open connections from one source IP address;
	// past it a new one from that address is closed at accept. 0 means 32.
	SSHMaxConnsPerSource int
	// SSHIdleTimeout closes an authenticated connection with no traffic for
	// this long, unless one of its sessions is the console, a `log --follow`
	// or a `--wait`. 0 means 10 min.
	SSHIdleTimeout time.Duration
	// SSHMaxCommandBytes caps the length of an SSH command line in bytes,
	// checked before it is split; a longer one is refused with exit 2.
	// 0 means 65536 (64 KiB).
	SSHMaxCommandBytes int
	// SSHMaxSessionsPerConn caps the session channels open at once on one
	// connection (OpenSSH's MaxSessions); past it a channel is refused
	// with the reason. 0 means 10.
	SSHMaxSessionsPerConn int
}

// Server is a running control node. Create it with New, start it with Start,
// stop it with Close.
type Server struct {
	live       atomic.Pointer[liveConfig] // the configuration now; Reload swaps it
	ids        *identity.Resolver         // keys and certificates to identities
	env        []string
	log        *slog.Logger
	db         *store.DB
	key        *seal.Key
	broker     *logs.Broker
	sched      *schedule.Queue
	relay      *relayHub // the pools' queues, workers and leases (relay.go)
	runsDir    string
	policyTime time.Duration
	runner     toolRunner       // starts tool processes; package exec
	held       heldIndex        // runs holding a saved plan, by working directory
	runs       oplog.Tracker    // every run not ended, for the operator log and metrics
	metrics    *metrics.Set     // Prometheus metrics, served on metrics_listen
	notifier   *notify.Notifier // sends notify blocks' deliveries in the background
	secretsMu  sync.Mutex       // serialises remembering a project's secret answers
	checkMu    sync.Mutex       // serialises launching checks: at most one pending per working directory
	driftMu    sync.Mutex       // serialises moving and dropping the plans drift checks keep
	sshLimits  api.SSHLimits    // Options' SSH limits with defaults filled in
	// checks launches scheduled drift checks (server/schedule); nil when no
	// template has a schedule. Set by Start, stopped by Close's cancel.
	checks *schedule.Checks
	// sealed lists, from start, held or kept sealed values the sealing key
	// cannot open (the key was changed).
	sealed []Problem

	// fingerprints makes the keyed fingerprints of a plan's sensitive
	// values in change sets, under a key derived from the sealing key.
	fingerprints planview.Fingerprinter
	changeCache  changeCache // decoded change sets, by run and plan digest (changes.go)

	mu     sync.Mutex
	cancel context.CancelCauseFunc
	// notifyStop stops the notifier, after the scheduler at Close.
	notifyStop context.CancelFunc
	closed     bool
	door       Door        // the front door Attach was given; nil before
	httpSrv    *httpServer // metrics_listen; nil without it
	hookSrv    *httpServer // webhook_listen; nil without it
	forge      *forgeSide  // the forge side (forge_side.go)
	// runCtx is Start's context; checksStop stops the check schedule
	// started from it (Reload starts a new one).
	runCtx     context.Context
	checksStop context.CancelFunc
}

// New opens the data directory (created mode 0700), the store and the
// sealing key, compiles the rules' policies (a policy that does not compile
// makes its rule hold every run it covers: the gate fails closed), and
// recovers what a previous process left: queued runs are queued again, a run
// that was executing is marked interrupted and never re-run, and any
// plaintext plan file is wiped (DESIGN invariants 2 and 6).
func New(cfg *config.Config, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PolicyTimeout == 0 {
		opts.PolicyTimeout = 10 * time.Second
	}
	if err := os.MkdirAll(cfg.Server.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	if err := os.Chmod(cfg.Server.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("restricting data directory: %w", err)
	}
	runsDir := filepath.Join(cfg.Server.DataDir, "runs")
	if err := os.MkdirAll(runsDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating runs directory: %w", err)
	}
	key, err := seal.LoadOrCreateKey(cfg.Server.SealKey)
	if err != nil {
		return nil, fmt.Errorf("loading the sealing key: %w", err)
	}
	db, err := store.Open(filepath.Join(cfg.Server.DataDir, "switchtender.db"))
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	armKillAfterCommit(db)
	db.DropBlobsAtEnd(Status.Final, blobPlan) // spec: the plan is "wiped when the apply ends"
	s := &Server{ids: identity.NewResolver(),
		env:        opts.Environ,
		log:        opts.Logger,
		db:         db,
		key:        key,
		broker:     logs.NewBroker(),
		runsDir:    runsDir,
		policyTime: opts.PolicyTimeout,
		runner:     execRunner{},
	}
	s.fingerprints = planview.NewFingerprinter(key.Derive(fingerprintPurpose))
	s.metrics = metrics.New(s.liveCounts)
	s.notifier = notify.New(notify.Options{Store: db, Blocks: func() map[string]*config.Notify { return s.config().Notifies },
		Log: s.log, Backoff: opts.NotifyBackoff, Timeout: opts.NotifyTimeout,
		Meters: notify.Meters{Sent: s.metrics.NotifySent, Failed: s.metrics.NotifyFailed, Queue: s.metrics.NotifyQueue}})
	s.sshLimits = opts.withConfig(cfg.Server).sshLimits()
	s.live.Store(newLiveConfig(cfg))
	s.sched = schedule.NewQueue(cfg.Server.MaxParallel, s.execute)
	s.relay = newRelayHub(s)
	s.forge = newForgeSide(s)
	for pool, d := range opts.LeaseTimeouts {
		if d > 0 {
			s.relay.timeout[pool] = d
		}
	}
	if err := s.recover(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.checkSealed(); err != nil {
		db.Close()
		return nil, err
	}
	if seq, head, err := db.AuditHead(); err == nil && head != "" {
		s.log.Info("audit trail head; keep it to verify the trail later (switchtender audit verify --head)", "entry", seq, "hash", head)
	}
	return s, nil
}

// buildRules turns configured rules into gate rules, compiling plan_gate
// policies once. A policy that cannot be read or compiled is kept as the
// rule's PolicyErr, so the rule holds what it covers with the error shown.
func buildRules(ctx context.Context, cfg *config.Config) ([]*gate.Rule, []*gate.Exemption) {
	var rules []*gate.Rule
	for _, r := range cfg.Rules {
		gr := &gate.Rule{
			Name:            r.Name,
			Templates:       r.Templates,
			Projects:        r.Projects,
			Kinds:           r.Kinds,
			Requesters:      r.Requesters,
			MaxDestroy:      r.MaxDestroy,
			RequireApproval: r.RequireApproval,
			Approvers:       r.Approvers,
			MinApprovals:    r.MinApprovals,
			ExcludeDryRun:   r.ExcludeDryRun,
		}
		if r.PlanGate != "" {
			src, err := os.ReadFile(r.PlanGate)
			if err != nil {
				gr.PolicyErr = fmt.Errorf("reading plan_gate policy: %w", err)
			} else if p, err := gate.CompilePolicy(ctx, r.PlanGate, src); err != nil {
				gr.PolicyErr = err
			} else {
				gr.Policy = p
			}
		}
		rules = append(rules, gr)
	}
	var ex []*gate.Exemption
	for _, e := range cfg.Exemptions {
		ex = append(ex, &gate.Exemption{Name: e.Name, Agents: e.Agents, Templates: e.Templates, Kinds: e.Kinds})
	}
	return rules, ex
}

// recover brings the store in line after a start: see New.
func (s *Server) recover() error {
	wiped, err := seal.WipeTree(s.runsDir, isPlaintextPlan)
	if err != nil {
		return fmt.Errorf("wiping plaintext plans left by a previous process: %w", err)
	}
	if wiped > 0 {
		s.log.Warn("recovery: wiped plaintext plan files a previous process left", "count", wiped)
		s.audit("", "switchtender", "recover", fmt.Sprintf("wiped %d plaintext plan files a previous process left", wiped))
	}
	runs, err := s.db.ListRuns()
	if err != nil {
		return fmt.Errorf("listing runs to recover: %w", err)
	}
	var interrupted []string
	for _, r := range runs {
		s.held.note(s.runDir(r), r)
		s.runs.Seed(r)
		if r.Status == StatusRunning {
			interrupted = append(interrupted, r.ID)
		}
	}
	if n := s.stopLeftovers(interrupted, s.config().Server.CancelGrace); n > 0 {
		s.log.Warn("stopped processes a previous server left running", "count", n, "runs", interrupted)
		s.audit("", "switchtender", "recover", fmt.Sprintf("stopped %d processes a previous server left running for runs %v", n, interrupted))
	}
	// ListRuns is newest first; queue again oldest first.
	var requeued, held int
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		switch r.Status {
		case StatusRunning:
			if _, err := s.transitionAudited(r.ID, StatusInterrupted, func(r *store.Run) error {
				r.Message = s.interruptedMessage(*r)
				return nil
			}, func(store.Run) store.AuditEvent {
				return auditEvent(r.ID, "switchtender", "recover", "marked interrupted: the server stopped while it executed; not re-run")
			}); err != nil {
				return fmt.Errorf("marking run %s interrupted: %w", r.ID, err)
			}
			s.dropHeld(r.ID)
			s.log.Warn("recovery: marked a run interrupted; it was executing when the server stopped and is not re-run", "run", r.ID, "template", r.Template, "kind", r.Kind)
			s.staleAfterInterrupt(r)
		case StatusQueued:
			s.enqueue(r)
			requeued++
		case StatusAwaitingApproval:
			held++
		}
	}
	dropped, err := s.dropEndedPlans()
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	if dropped > 0 {
		s.log.Warn("recovery: dropped sealed plans of runs that had ended", "count", dropped)
	}
	s.log.Info("recovery: start", "queued_again", requeued, "interrupted", len(interrupted), "held", held)
	return nil
}

// enqueue queues a run's next phase for its working directory, as resolved
// at launch. A run that cannot be queued fails with the reason.
func (s *Server) enqueue(r store.Run) {
	if pool := s.poolOf(r.Template); pool != "" {
		s.relay.enqueue(r, pool)
		return
	}
	wd := s.runDir(r)
	if wd == "" {
		_, err := s.workdir(r)
		s.fail(r.ID, fmt.Sprintf("%v; nothing ran", err))
		return
	}
	s.sched.Enqueue(schedule.Job{RunID: r.ID, Workdir: wd})
}

// fail ends a queued or held run that cannot go on, with a sentence.
func (s *Server) fail(id, msg string) {
	if _, err := s.transitionAudited(id, StatusFailed, func(r *store.Run) error { r.Message = msg; return nil },
		func(store.Run) store.AuditEvent { return auditEvent(id, "switchtender", string(StatusFailed), msg) }); err != nil {
		s.log.Error("failing run", "run", id, "err", err)
	}
}

// Problems lists, as sentences, what ProblemList lists.
func (s *Server) Problems() []string {
	var out []string
	for _, p := range s.ProblemList() {
		out = append(out, p.What)
	}
	return out
}

// ProblemList is the judgement (judge.go) of the configuration in force,
// with its compiled rules and the server's SSH limits, and the held or
// kept sealed values the sealing key could not open at start. serve logs
// them at start, refuses to start on an error and, with --strict, on any.
func (s *Server) ProblemList() []Problem {
	j := judging{cfg: s.config(), environ: s.env, rules: s.currentRules(), ssh: s.sshLimits}
	return append(judge(j), s.sealed...)
}

// Check is what `switchtender check` reports for a configuration that
// loads, without opening a data directory or running anything: the
// judgement (judge.go) serve and reload act on, each problem with its
// severity and the file:line of its block; CheckData checks the data
// directory.
func Check(cfg *config.Config, environ []string) []Problem {
	return judgeFresh(cfg, environ)
}

// problems names what makes runs fail: a template whose working directory
// cannot be resolved inside its checkout or whose tool binary is not on
// environ's PATH, a pool template's problems, a credential's command not
// found.
func problems(cfg *config.Config, environ []string) []Problem {
	var out []Problem
	for _, t := range sortedTemplates(cfg) {
		if q := cfg.Queues[t.Queue]; q != nil && q.Pool != "" {
			for _, msg := range poolTemplateProblems(cfg, t, q) {
				out = append(out, Problem{Where: t.Line, What: msg})
			}
			continue // its workers hold the checkout and the tool
		}
		out = append(out, templateProblems(cfg, t, environ)...)
	}
	return append(out, credentialProblems(cfg, environ)...)
}

// templateProblems names what makes template t's runs fail: its project
// or working directory, its tool, its queue.
func templateProblems(cfg *config.Config, t *config.Template, environ []string) []Problem {
	var out []Problem
	p := cfg.Projects[t.Project]
	if p == nil {
		out = append(out, Problem{Where: t.Line, What: fmt.Sprintf("template %s (%s): project %q is not configured", t.Name, t.Line, t.Project)})
	} else if _, err := exec.ResolveWorkingDir(p.Path, t.Command); err != nil {
		out = append(out, Problem{Where: t.Line, What: fmt.Sprintf("template %s (%s): refusing working directory: %v; its runs will fail", t.Name, t.Line, err)})
	}
	if e, err := exec.EngineFor(t.Tool); err == nil {
		if _, err := e.Find(envValue(environ, "PATH")); err != nil {
			out = append(out, Problem{Where: t.Line, What: fmt.Sprintf("template %s (%s): %v", t.Name, t.Line, err)})
		}
	}
	if q := cfg.Queues[t.Queue]; q != nil && q.Pool != "" {
		out = append(out, Problem{Where: t.Line, What: fmt.Sprintf("template %s (%s): its queue %q belongs to pool %q, and relay workers are not available in this version, so every launch is refused; point the template at a queue without a pool", t.Name, t.Line, q.Name, q.Pool)})
	}
	return out
}

// credentialProblems names command-source credentials whose command is not
// found on environ's PATH: every run that uses one would fail before
// starting.
func credentialProblems(cfg *config.Config, environ []string) []Problem {
	var out []Problem
	for _, name := range sortedKeys(cfg.Credentials) {
		c := cfg.Credentials[name]
		if len(c.Command) == 0 {
			continue
		}
		if _, err := findCommand(c.Command[0], envValue(environ, "PATH")); err != nil {
			out = append(out, Problem{Where: c.Line, What: fmt.Sprintf("credential %s (%s): its command %q is not found (%v); runs that use it will fail", name, c.Line, c.Command[0], err)})
		}
	}
	return out
}

// findCommand finds name as exec.LookPath would, on path instead of the
// process's PATH.
func findCommand(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return osexec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if p, err := osexec.LookPath(filepath.Join(dir, name)); err == nil && dir != "" {
			return p, nil
		}
	}
	return "", fmt.Errorf("not on the PATH %q", path)
}

// isPlaintextPlan names the files of a run's private directory that hold a
// plan in plaintext: the saved plan and anything derived from it.
func isPlaintextPlan(name string) bool {
	return name == planFileName || name == planJSONName
}

// Start begins executing queued runs and serving metrics_listen. It
// returns once the listeners are bound; Close stops them. The front door
// (package server/sshd) is started after it and given to Attach.
func (s *Server) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	s.sched.Start(ctx)
	// The notifier outlives the runs at Close: a run the stop interrupts
	// posts its event after the server's context ended, and the notifier
	// must still store it (it stops once the scheduler has).
	nctx, ncancel := context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.notifyStop = ncancel
	s.mu.Unlock()
	s.notifier.Start(nctx)
	s.relay.watchLeases(ctx)
	hs, err := s.startHTTP()
	if err != nil {
		cancel(err)
		return err
	}
	hooks, err := s.startWebhooks()
	if err != nil {
		hs.close()
		cancel(err)
		return err
	}
	s.mu.Lock()
	s.httpSrv, s.hookSrv = hs, hooks
	s.mu.Unlock()
	s.forge.start(ctx)
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	s.restartCheckSchedule()
	return nil
}

// Door is the front door as the service sees it: where it listens, and
// how it shuts. Package server/sshd's *Door is one.
type Door interface {
	// Addr is the address the door listens on.
	Addr() string
	// Listening reports whether the door takes connections now.
	Listening() bool
	// Close stops the door: no new connection or command reaches the
	// service. A second call does nothing.
	Close() error
}

// Attach tells the service that d serves its front door: /readyz reports
// ready only while a door is attached and the service is open, SSHAddr is
// d's address, and Close closes d before anything else.
func (s *Server) Attach(d Door) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.door = d
}

// SSHAddr is the address the attached front door listens on (useful with
// port 0), or "" before Attach.
func (s *Server) SSHAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.door == nil {
		return ""
	}
	return s.door.Addr()
}

// Close closes the attached front door first, then metrics_listen, cancels
// running runs (tofu gets an interrupt first) and waits for them, then
// closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	door := s.door
	cancel := s.cancel
	hs, hooks := s.httpSrv, s.hookSrv
	s.mu.Unlock()
	if door != nil {
		_ = door.Close()
	}
	hooks.close()
	hs.close()
	if cancel != nil {
		cancel(errShutdown)
	}
	s.sched.Stop()
	s.mu.Lock()
	stopNotify := s.notifyStop
	s.mu.Unlock()
	if stopNotify != nil {
		stopNotify()
	}
	s.notifier.Wait()
	return s.db.Close()
}

func (s *Server) audit(runID, actor, action, detail string) {
	if err := s.db.Audit(auditEvent(runID, actor, action, detail)); err != nil {
		s.log.Error("writing audit event", "run", runID, "err", err)
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
