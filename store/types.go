package store

import "time"

// Run is one run as stored: what was launched, where it stands, its proposal
// and approvals. The server fills it; the store assigns ID and CreatedAt and
// keeps it JSON-encoded. No secret may be put in it except sealed (SealedVars):
// the database file is not a place for secrets (DESIGN invariant 3).
type Run struct {
	ID              string            // decimal sequence "1","2",... assigned by CreateRun
	Template        string            // template name
	Project         string            // project name
	Tool            string            // "opentofu" | "terraform"
	Command         string            // working directory relative to the checkout
	Queue           string            // queue name
	Kind            string            // "apply" | "plan" (dry run) | "check" (drift check) | "reconcile"
	Requester       string            // user or agent name
	Phase           string            // "plan" (init, then plan or one-step apply) | "apply" (carry out the approved saved plan)
	RequesterKind   string            // "user" | "agent"
	RequireApproval bool              // the submission asked for approval (require_approval)
	AIProposal      bool              // the submission is an AI proposal
	ReconcileOf     string            // check run ID for a reconcile
	Vars            map[string]string // non-secret variables, as encoded for TF_VAR_
	SecretVars      []string          // names of secret answers (values only in SealedVars)
	SealedVars      []byte            // sealed JSON of the secret answers
	Status          string            // state machine status; the server defines the values
	Message         string            // a sentence for people: why it failed/is held, what to do
	ExitCode        int               // -1 until a process exited
	CreatedAt       time.Time
	StartedAt       time.Time
	FinishedAt      time.Time
	Proposal        *Proposal  // nil until the run proposes (or is held at request)
	Approvals       []Approval // in the order they were given
	Steps           []Step     // which tofu steps ran, exit codes
}

// Proposal is what a gated run proposes to apply: the saved plan's digest,
// its change counts and the rules' decision on it.
type Proposal struct {
	Digest    string              // "sha256:<hex>" of the saved plan file
	Add       int                 // resources the plan creates
	Change    int                 // resources updated in place
	Destroy   int                 // resources destroyed (replacements included)
	Replace   int                 // resources replaced
	Forget    int                 // resources removed from state without destroying
	Addresses map[string][]string // action -> addresses
	Holds     []Hold              // rules that hold it and why
	Refusals  []Hold              // rules that refuse it and why
	Findings  []Finding           // configuration scan findings
	PlanText  string              // tofu's own rendering of the plan, masked
	Requested string              // who asked and how, a sentence
	Lineage   string              // state lineage the plan was made against
	Serial    int64               // state serial the plan was made against
	Stage     string              // "request" (held before planning) | "plan"
	CreatedAt time.Time
	Used      bool // applied once; a second use is refused
}

// Hold is a rule's decision on a proposal: which rule, why, who may release.
type Hold struct {
	Rule      string
	Reason    string
	Approvers []string
}

// Finding is a configuration scan finding: an address and why it matters.
type Finding struct {
	Address string
	Reason  string
}

// Approval is one person's decision on a proposal, bound to its digest and stage.
type Approval struct {
	By       string
	Digest   string
	Stage    string
	Decision string // "approve" | "reject"
	Reason   string
	At       time.Time
}

// Step is one tool process a run started (init, plan, show, apply).
type Step struct {
	Name     string
	ExitCode int
	Started  time.Time
	Finished time.Time
}

// Chunk is a piece of a run's log: Data starting at byte Offset of the log.
type Chunk struct {
	Offset int64
	Data   []byte
}

// AuditEvent is one entry of the audit trail: who did what to which run.
// RunID is empty for events that concern no run.
type AuditEvent struct {
	At     time.Time
	RunID  string
	Actor  string
	Action string
	Detail string
}
