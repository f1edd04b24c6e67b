package server

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// What the front door (package server/sshd) asks of the service, beyond
// the lifecycle's own methods. Each reads the state and the configuration
// in force at the call.

// Config is the configuration in force now; Reload swaps it.
func (s *Server) Config() *config.Config { return s.config() }

// Logger is the operator log.
func (s *Server) Logger() *slog.Logger { return s.log }

// Audit writes an audit entry about run (or none, with ""); a failure to
// write it goes to the operator log.
func (s *Server) Audit(run, actor, action, detail string) { s.audit(run, actor, action, detail) }

// Scrub masks the configuration's credentials and secret answers in text.
func (s *Server) Scrub(text string) string { return s.scrub(text) }

// SSHRefused is the counter of SSH connections or sessions refused for
// reason (unknown_key, connection_limit, session_limit).
func (s *Server) SSHRefused(reason string) prometheus.Counter {
	return s.metrics.SSHRefused.WithLabelValues(reason)
}

// SSHSessions is the gauge of SSH sessions open.
func (s *Server) SSHSessions() prometheus.Gauge { return s.metrics.SSHOpen }

// CancelRun is Cancel that also returns the status the run had before.
func (s *Server) CancelRun(ctx context.Context, who Identity, id string) (store.Run, Status, error) {
	return s.cancelRun(ctx, who, id)
}

// RerunAsAIProposal is Rerun for an agent's MCP session: an apply it
// starts is an AI proposal, held for a person.
func (s *Server) RerunAsAIProposal(ctx context.Context, who Identity, id string) (store.Run, error) {
	return s.rerun(ctx, who, id, true)
}

// Reconcilable is nil when a reconcile can be proposed from check r, and
// otherwise the coded refusal saying why not.
func (s *Server) Reconcilable(r store.Run) error { return s.reconcilable(r) }

// Run is run id, or a coded not_found refusal.
func (s *Server) Run(id string) (store.Run, error) { return s.getRun(id) }

// GetRun is run id as the store holds it (store.ErrNotFound when missing).
func (s *Server) GetRun(id string) (store.Run, error) { return s.db.GetRun(id) }

// ListRuns is every run, newest first.
func (s *Server) ListRuns() ([]store.Run, error) { return s.db.ListRuns() }

// CheckStale marks r's held plan stale when its working directory's state
// moved on since the plan.
func (s *Server) CheckStale(r store.Run) error { return s.checkStale(r) }

// WaitingFor reports whether who can release something of r's held
// proposal now.
func (s *Server) WaitingFor(r store.Run, who Identity) bool { return s.waitingFor(r, who) }

// Unapprovable says why held run r can never be released (the sealing key
// cannot open what it keeps), or "".
func (s *Server) Unapprovable(r store.Run) string { return s.unapprovable(r) }

// HoldViews lists the rules that hold r's current proposal.
func (s *Server) HoldViews(r store.Run) []api.HoldView { return s.holdViews(r) }

// NewerProposal is the ID of a newer held or applied proposal for r's
// working directory, or "".
func (s *Server) NewerProposal(r store.Run) string { return s.newerProposal(r) }

// WatchRuns returns a channel told (coalesced) whenever a run changes, and
// the function that stops it.
func (s *Server) WatchRuns() (<-chan struct{}, func()) { return s.broker.WatchRuns() }

// ReadLog is run id's masked log from byte offset from, as stored.
func (s *Server) ReadLog(id string, from int64) ([]store.Chunk, error) { return s.db.ReadLog(id, from) }

// LogSize is how many bytes run id's log holds now.
func (s *Server) LogSize(id string) (int64, error) { return s.db.LogSize(id) }

// AuditTrail is the audit entries keep accepts, oldest first.
func (s *Server) AuditTrail(keep func(store.AuditEvent) bool) ([]store.AuditEvent, error) {
	return s.db.AuditTrail(keep)
}

// Store is the run store s owns: the database under its data directory.
// It is for reading what s recorded (runs, logs, audit, approvals) from
// outside the package, as the scenario tests do; writes through it bypass
// s's transitions, its broker and its notifications. It is nil before New
// returns and stays valid until Close.
func (s *Server) Store() *store.DB { return s.db }
