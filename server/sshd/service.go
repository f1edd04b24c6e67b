package sshd

import (
	"context"
	"log/slog"
	"net"

	"charm.land/ssh"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// Service is what the front door needs of the control-node service
// (package server's *Server is one). The door holds no state of runs: it
// asks the service at each use, so a reload of the configuration takes
// effect on the next command of a session already open.
type Service interface {
	// Config is the configuration in force now; Reload swaps it.
	Config() *config.Config
	// Logger is the operator log.
	Logger() *slog.Logger
	// SSHLimits are the SSH limits to enforce, with defaults filled in.
	SSHLimits() api.SSHLimits
	// Identify maps a public key or user certificate to a user or agent
	// under the configuration in force, or says why it maps to none (a
	// *identity.Refusal). remote is the client's address (a
	// certificate's source-address); nil skips that check.
	Identify(key ssh.PublicKey, remote net.Addr) (api.Identity, error)
	// ServeRelay serves a relay worker's session of pool until it ends.
	ServeRelay(sess ssh.Session, pool string)
	// Audit writes an audit entry (run may be "").
	Audit(run, actor, action, detail string)
	// Scrub masks the configuration's secrets in text.
	Scrub(text string) string
	// SSHRefused counts a refused connection or session, by reason.
	SSHRefused(reason string) prometheus.Counter
	// SSHSessions is the gauge of SSH sessions open.
	SSHSessions() prometheus.Gauge

	// The run lifecycle; each refusal is a coded *api.Error.
	CheckLaunch(who api.Identity, req api.LaunchRequest) error
	Launch(ctx context.Context, who api.Identity, req api.LaunchRequest) (store.Run, error)
	Approve(ctx context.Context, who api.Identity, id, digest string) (store.Run, error)
	Reject(ctx context.Context, who api.Identity, id, reason string) (store.Run, error)
	Cancel(ctx context.Context, who api.Identity, id string) (store.Run, error)
	// CancelRun is Cancel that also returns the status the run had.
	CancelRun(ctx context.Context, who api.Identity, id string) (store.Run, store.Status, error)
	Rerun(ctx context.Context, who api.Identity, id string) (store.Run, error)
	// RerunAsAIProposal is Rerun from an agent's MCP session: an apply
	// it starts is an AI proposal.
	RerunAsAIProposal(ctx context.Context, who api.Identity, id string) (store.Run, error)
	Reconcile(ctx context.Context, who api.Identity, checkID string) (store.Run, error)
	// Reconcilable is nil when a reconcile can be proposed from check r.
	Reconcilable(r store.Run) error

	// What runs are and show.
	Run(id string) (store.Run, error) // a missing run is a coded not_found
	GetRun(id string) (store.Run, error)
	ListRuns() ([]store.Run, error)
	View(r store.Run, who api.Identity, withPlan bool) api.RunView
	// Changes is the change set of run id's saved plan (a drift check's:
	// the plan it kept), computed when the plan was measured and read from
	// the store or memory, never by running a tool; nil, nil when it has
	// none. The result is shared: never change it.
	Changes(id string) (*planview.ChangeSet, error)
	Refreshed(r store.Run) store.Run
	CheckStale(r store.Run) error
	WaitingFor(r store.Run, who api.Identity) bool
	Unapprovable(r store.Run) string
	HoldViews(r store.Run) []api.HoldView
	NewerProposal(r store.Run) string
	WatchRuns() (<-chan struct{}, func())
	ReadLog(id string, from int64) ([]store.Chunk, error)
	LogSize(id string) (int64, error)
	FollowLog(ctx context.Context, id string, from int64, fn func(store.Chunk) error) error
	AuditTrail(keep func(store.AuditEvent) bool) ([]store.AuditEvent, error)
	Workers() []api.WorkerView
}
