// Package tui is Switchtender's approver console: Bubble Tea models for the
// run list, a run's detail with its live log, a held proposal with approval
// and rejection, and the launcher with survey prompts.
//
// The package talks to the control node only through the Backend interface it
// declares here; the server adapts itself to it and runs one tea.Program per
// SSH session with the model New returns. Every string that arrives from the
// Backend (log bytes, plan text, addresses, reasons) is stripped of terminal
// control sequences before it reaches the screen, so a log cannot drive the
// approver's terminal.
package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/switchtender/switchtender/planview"
)

// Identity is who is looking at the console, as the server authenticated them.
type Identity struct {
	Name       string
	Agent      bool // an AI agent's key rather than a person's
	CanLaunch  bool // may open the launcher (role "launch")
	CanApprove bool // may approve or reject held proposals (role "approve")
}

// RunSummary is one row of the run list.
type RunSummary struct {
	ID, Template string
	Kind         string // "apply", "plan" (dry run), "check" (drift check), "reconcile", ...
	Status       string // the server's status, shown as is ("queued", "running", "awaiting_approval", "stale", ...)
	Requester    string
	Agent        bool // the requester is an AI agent
	Forge        bool // the requester is a forge account (a pull request's author or merger)
	CreatedAt    time.Time
	WaitingForMe bool   // a proposal of this run is held for the viewing identity's approval
	Message      string // the run's last word to people, e.g. "Saved plan is stale: submit the apply again"
	Stale        bool   // the run's held plan can never apply: the state changed after it was made
	// PullRequest is the pull request a forge-launched run belongs to; nil
	// for every other run.
	PullRequest *PullRequest
}

// PullRequest is the pull request a forge-launched run belongs to, as the
// forge named it: every string is the forge's and is shown escaped.
// Repository is "owner/name"; HeadSHA the head commit the run planned;
// MergeSHA, for the apply a merge proposed, the merge commit. For such an
// apply, ShownRun is the pull request's plan last shown on it, and once
// the apply's plan was compared with it (Compared) Differences lists how
// they differ, one sentence a resource, empty when they agree.
type PullRequest struct {
	Forge, Repository string
	Number            int
	HeadSHA, MergeSHA string
	SupersededBy      string // the newer head that replaced this run's head, or ""
	ShownRun          string
	Compared          bool
	Differences       []string
}

// Finding is one result of the configuration scan: the address of a data
// source that may run code or write (module.network.data.external.lookup),
// where it is declared ("main.tf:4", empty when unknown) and why. Each is
// shown escaped as its own unit, so a file name cannot hide the reason.
type Finding struct{ Address, Where, Reason string }

// Hold is one rule that holds a proposal, why it does, and who may release
// it. Each holding rule is released by one of its own approvers.
type Hold struct {
	Rule, Reason string
	Approvers    []string // who may release it; empty: anyone with the approve role
	ReleasedBy   string   // who released it on this proposal; "" while it still holds
}

// Proposal is what a held run would do and what an approval releases.
type Proposal struct {
	Digest string // "sha256:HEX" of the saved plan (or of the request, at stage "request")
	Stage  string // "request" (held before planning) | "scan" (the configuration scan found something) | "plan"

	Add, Change, Destroy, Replace, Forget int
	// Addresses lists resource addresses by action; the keys are "destroy",
	// "replace", "change", "add", "forget" (other keys are shown after those).
	Addresses map[string][]string
	Findings  []Finding
	Holds     []Hold
	Requested string // who asked and how: "alice (person)", "deploy-bot (agent)", "require_approval", "reconcile of check 12"
	// DryRun marks the plan a dry run made: it proposes nothing, so no
	// rule holds it and nothing releases it, and its plan file was not
	// kept; the pane shows what it would do.
	DryRun   bool
	PlanText string // tofu's own plan rendering, already masked
	// Changes is the structured change set of the saved plan (masked, no
	// sensitive value), computed once when the plan was measured; nil for
	// a proposal made before change sets were kept, or not at stage "plan".
	Changes *planview.ChangeSet

	Stale       bool   // the state changed after the plan was made: it can never apply
	StaleReason string // why it is stale and what to do, for people
	NewerRun    string // ID of a run with a newer held or applied proposal for the same working directory, or ""
	// Unapprovable says why the proposal can never be released (the
	// sealing key cannot open its saved plan or secret answers) and what
	// to do; "" when it can be.
	Unapprovable string
}

// ResourceDiff is one resource instance a drift check names: its address,
// the action ("update", "delete", ...) and the names of the top-level
// attributes that differ. Values are never sent: they may be sensitive.
type ResourceDiff struct {
	Address, Action string
	Attributes      []string
}

// CheckResult is what a drift check found, for the check's run screen.
// Finished is false while the check has recorded nothing (it runs, or it
// failed); Drifted is false for a check that found no drift.
type CheckResult struct {
	Finished  bool
	Drifted   bool
	CheckedAt time.Time
	Drift     []ResourceDiff // changed outside OpenTofu (resource_drift)
	Changes   []ResourceDiff // what applying the configuration would do (resource_changes)

	// The kept plan, as a reconcile would propose it (zero without drift).
	Digest                                string
	Add, Change, Destroy, Replace, Forget int
	Holds                                 []Hold // rules that would hold the reconcile too
	PlanText                              string // tofu's rendering, already masked

	SupersededBy string // the newer check of the same working directory that dropped the plan
	ReconciledBy string // the reconcile run that carries the plan
	// Reconcilable is true when a reconcile can be proposed from the check
	// now (the server's own test); Reconcile is the server's sentence on
	// it: why not, when it cannot.
	Reconcilable bool
	Reconcile    string
}

// RunDetail is everything the detail screen shows about one run. Proposal is
// nil unless the run holds one; Check is nil unless the run is a drift check.
type RunDetail struct {
	RunSummary
	Project, Command, Tool string
	Vars                   map[string]string
	ExitCode               int
	PlannedBy, AppliedBy   string // the relay workers that took its plan and apply phases, "" on the control node
	Proposal               *Proposal
	Check                  *CheckResult
}

// LogChunk is a piece of a run's log starting at byte Offset of the whole log.
type LogChunk struct {
	Offset int64
	Data   []byte
}

// Field is one survey prompt of a template.
type Field struct {
	Name, Type, Description string // Type: "string", "number", "bool", "list", "map", "choice"
	Default                 string
	HasDefault              bool
	Choices                 []string // for Type "choice"
	Sensitive               bool     // the answer is masked while typed
}

// Template is a launchable run definition.
type Template struct {
	Name, Project, Command, Tool string
	Survey                       []Field
}

// LaunchRequest asks the server to start a run of Template.
type LaunchRequest struct {
	Template string
	Kind     string // "apply" (real run), "plan" (dry run), "check" (drift check)
	// Answers maps a survey field's name to its answer, for the fields the
	// user gave a value (a field left untouched that has a default may
	// carry the default; one without a default is left out, and the server
	// refuses the launch at that field).
	Answers map[string]string
}

// FieldError is a refusal about one survey field of a launch: Launch and
// CheckLaunch return it as *FieldError (find it with errors.As), and the
// launcher shows Message at the field named Field.
type FieldError struct {
	Field   string // the survey field's name
	Message string // a sentence for the user: what is wrong and what to do
}

// Error returns Message.
func (e *FieldError) Error() string { return e.Message }

// Backend is what the console needs from the control node. Errors are shown
// to the user verbatim, so they should be sentences a user can act on.
type Backend interface {
	// Identity is the session's authenticated identity.
	Identity() Identity
	// Runs lists runs, newest first.
	Runs(ctx context.Context) ([]RunSummary, error)
	// WatchRuns ticks whenever any run changed; it is closed when ctx ends.
	WatchRuns(ctx context.Context) <-chan struct{}
	// Run is one run's detail.
	Run(ctx context.Context, id string) (RunDetail, error)
	// FollowLog sends the whole log from byte offset from, then live chunks;
	// the channel is closed when the run's log ends or ctx ends.
	FollowLog(ctx context.Context, id string, from int64) (<-chan LogChunk, error)
	// Templates lists the templates the identity may launch.
	Templates(ctx context.Context) ([]Template, error)
	// CheckAnswer is the server's own validation of one survey answer.
	CheckAnswer(template, field, value string) error
	// CheckLaunch is the server's one validation of a whole launch, the
	// same the SSH launch command uses, without starting anything: nil, a
	// *FieldError for a problem at one survey field (an unknown field, a
	// required one without an answer, an answer of the wrong type), or
	// another error.
	CheckLaunch(ctx context.Context, req LaunchRequest) error
	// Launch starts a run and returns its ID; it refuses what CheckLaunch
	// refuses, with the same errors.
	Launch(ctx context.Context, req LaunchRequest) (string, error)
	// Rerun submits a new run repeating run id (same template, kind and
	// answers, secret ones reused by the server) and returns the new run's
	// ID; it is refused for a run that has not ended or whose template
	// changed incompatibly.
	Rerun(ctx context.Context, id string) (string, error)
	// Approve releases the proposal with exactly this digest; it is refused if
	// the held proposal's digest differs (changed or used meanwhile).
	Approve(ctx context.Context, id, digest string) error
	// Reject turns the held proposal down with an optional reason.
	Reject(ctx context.Context, id, reason string) error
	// Cancel stops a run that has not ended: a queued one never starts, a
	// running one's tool gets an interrupt first (a kill only after the grace
	// period), a held one is ended and its saved plan dropped. It is refused
	// for a run that already ended or one the identity may not cancel.
	Cancel(ctx context.Context, id string) error
	// Reconcile proposes applying exactly the plan drift check checkID
	// kept and returns the new reconcile run's ID; the reconcile is held
	// for a person's approval. It is refused, with the server's sentence,
	// for a run that is not a check, a check that kept no plan, one a newer
	// check superseded and one already reconciled, and for an identity
	// without the launch role.
	Reconcile(ctx context.Context, checkID string) (string, error)
}

// Options configure a console session.
type Options struct {
	Width, Height int  // initial terminal size; 80x24 when zero
	NoColor       bool // no colour styles (marks stay visible as text)
	// Now is the clock used for ages; time.Now when nil.
	Now func() time.Time
	// Context bounds every Backend subscription of the session (the SSH
	// session's context); context.Background when nil. Quitting cancels it too.
	Context context.Context
}

// New returns the root model of one console session for b. Run it with
// tea.NewProgram; the program's WindowSizeMsg resizes every screen.
func New(b Backend, opts Options) tea.Model {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	if opts.Height <= 0 {
		opts.Height = 24
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	parent := opts.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	m := &model{
		b:      b,
		id:     b.Identity(),
		opts:   opts,
		st:     newStyles(opts.NoColor),
		ctx:    ctx,
		cancel: cancel,
		w:      opts.Width,
		h:      opts.Height,
	}
	m.list = newRunList(m.env())
	m.list.SetSize(m.w, m.h)
	return m
}
