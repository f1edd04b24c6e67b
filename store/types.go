package store

import "time"

// Run is one run as stored: what was launched, where it stands, its proposal
// and approvals. The server fills it; the store assigns ID and CreatedAt and
// keeps it JSON-encoded. No secret may be put in it except sealed (SealedVars):
// the database file is not a place for secrets (DESIGN invariant 3).
type Run struct {
	ID              string            `json:"id"`               // decimal sequence "1","2",... assigned by CreateRun
	Template        string            `json:"template"`         // template name
	Project         string            `json:"project"`          // project name
	Tool            string            `json:"tool"`             // "opentofu" | "terraform"
	Command         string            `json:"command"`          // working directory relative to the checkout
	Workdir         string            `json:"workdir"`          // the working directory as resolved at launch: absolute, symlink-free
	WorkdirID       string            `json:"workdir_id"`       // its identity at launch, "DEVICE:INODE", so a directory swapped in later is told apart
	Queue           string            `json:"queue"`            // queue name
	Kind            Kind              `json:"kind"`             // "apply" | "plan" (dry run) | "check" (drift check) | "reconcile"
	Requester       string            `json:"requester"`        // user or agent name
	Phase           Phase             `json:"phase"`            // "plan" (init, then plan or one-step apply) | "apply" (carry out the approved saved plan)
	RequesterKind   RequesterKind     `json:"requester_kind"`   // "person" | "agent" (runs stored as "user" read as "person")
	RequireApproval bool              `json:"require_approval"` // the submission asked for approval (require_approval)
	AIProposal      bool              `json:"ai_proposal"`      // the submission is an AI proposal
	ReconcileOf     string            `json:"reconcile_of"`     // check run ID for a reconcile
	Vars            map[string]string `json:"vars"`             // non-secret variables, as encoded for TF_VAR_
	SecretVars      []string          `json:"secret_vars"`      // names of secret answers (values only in SealedVars)
	SealedVars      []byte            `json:"sealed_vars"`      // sealed JSON of the secret answers
	Answers         map[string]string `json:"answers"`          // every survey field's non-secret answer as typed (or its default), for rerun
	SealedAnswers   []byte            `json:"sealed_answers"`   // sealed JSON of the secret survey answers as typed, for rerun
	RerunOf         string            `json:"rerun_of"`         // the run this one repeats (rerun), or ""
	CancelRequested string            `json:"cancel_requested"` // who cancelled the run while it executed; the executor ends it cancelled
	Status          Status            `json:"status"`           // where the run stands (see Status)
	Message         string            `json:"message"`          // a sentence for people: why it failed/is held, what to do
	ExitCode        int               `json:"exit_code"`        // -1 until a process exited
	CreatedAt       time.Time         `json:"created_at"`
	StartedAt       time.Time         `json:"started_at"`
	FinishedAt      time.Time         `json:"finished_at"`
	Proposal        *Proposal         `json:"proposal"`             // nil until the run proposes (or is held at request)
	Approvals       []Approval        `json:"approvals"`            // in the order they were given
	Steps           []Step            `json:"steps"`                // which tofu steps ran, exit codes
	Check           *Check            `json:"check,omitempty"`      // a drift check's finding, once its plan was read
	Commit          *Commit           `json:"commit,omitempty"`     // the commit the run ran, when its checkout is a git repository
	Scan            *Scan             `json:"scan,omitempty"`       // the configuration scan's evidence, when the run was scanned
	PlannedBy       string            `json:"planned_by,omitempty"` // the relay worker that planned (or dry-ran) it
	// PullRequest is set on a run the forge launched: a pull request's plan
	// or the apply its merge proposed (docs/forges.md).
	PullRequest *PullRequest `json:"pull_request,omitempty"`
	// DryPlan is what a dry run's saved plan was: its digest and counts
	// (a gated run's are its Proposal's, a drift check's its Check.Plan).
	DryPlan   *DryPlan `json:"dry_plan,omitempty"`
	AppliedBy string   `json:"applied_by,omitempty"` // the relay worker that applied it

	// StatusAt is when the run entered Status (zero for runs stored before
	// it was kept: their CreatedAt stands in).
	StatusAt time.Time `json:"status_at,omitzero"`
	// PrevStatus is the status a change made in memory moved the run from,
	// so that whoever made the change can report it; it is never stored.
	PrevStatus Status `json:"-"`
}

// PullRequest is the pull request a forge-launched run belongs to.
// Forge is the forge block's name and Repository the base repository as
// the forge names it ("owner/name"). HeadSHA is the head commit a plan
// planned; MergeSHA, for the apply a merge proposed, the merge commit the
// checkout was moved to. DeliveryID is the delivery that launched it.
type PullRequest struct {
	Forge      string `json:"forge"`
	Repository string `json:"repository"`
	Number     int    `json:"number"`
	HeadSHA    string `json:"head_sha"`
	MergeSHA   string `json:"merge_sha,omitempty"`
	DeliveryID string `json:"delivery_id"`
	// Author is the pull request's author as the forge names them: with
	// the merger (the requester), who may not approve the apply.
	Author string `json:"author,omitempty"`
	// SupersededBy is the newer head that replaced this run's head.
	SupersededBy string `json:"superseded_by,omitempty"`
	// ShownRun, for a merge's apply, is the pull request's plan of the
	// same template last shown on the pull request, its change set the
	// one the apply's is compared with; Differences says, resource by
	// resource, how they differ, once the apply's plan was made
	// (Compared), empty when they agree.
	ShownRun    string   `json:"shown_run,omitempty"`
	Compared    bool     `json:"compared,omitempty"`
	Differences []string `json:"differences,omitempty"`
}

// DryPlan is a dry run's saved plan as measured: its digest ("sha256:<hex>"
// of the plan file) and change counts.
type DryPlan struct {
	Digest  string `json:"digest"`
	Add     int    `json:"add"`
	Change  int    `json:"change"`
	Destroy int    `json:"destroy"`
	Replace int    `json:"replace"`
	Forget  int    `json:"forget"`
}

// Commit is the commit a run ran. For a pull request's plan (launch --ref)
// Ref is the ref as given and SHA the commit it named at launch; for any
// other run SHA is the checkout's HEAD when the run started and Dirty says
// whether its working tree had changes.
type Commit struct {
	Ref   string `json:"ref,omitempty"`
	SHA   string `json:"sha"`
	Dirty bool   `json:"dirty"`
}

// Scan is the configuration scan's evidence (spec "What a plan runs, and
// what the gate reads"): what it read and what it found. Digest is the
// digest of the modules it read ("sha256:<hex>", package scan); the run
// plans only that tree.
type Scan struct {
	Digest    string    `json:"digest"`
	Modules   int       `json:"modules"`  // modules read, the root module included
	Files     int       `json:"files"`    // configuration files read
	Findings  []Finding `json:"findings"` // in address order; empty when the configuration is clean
	Why       string    `json:"why"`      // why it was scanned: "exclude_dry_run" or "pull request"
	ScannedAt time.Time `json:"scanned_at"`
}

// Check is what a drift check found and what became of the plan it kept.
// Its Plan is proposal-like (digest, counts, addresses, basis, plan text)
// and never held itself: a reconcile carries it. Drift and Changes name
// addresses and attributes only, never values.
type Check struct {
	Drifted      bool           `json:"drifted"`        // the plan changes something (plan exit code 2)
	Plan         *Proposal      `json:"plan,omitempty"` // the kept plan, as a reconcile proposes it
	Drift        []ResourceDiff `json:"drift"`          // resource_drift: changed outside OpenTofu
	Changes      []ResourceDiff `json:"changes"`        // resource_changes: what the configuration would do
	Kept         bool           `json:"kept"`           // a sealed plan is kept (blob "drift", key = this run's ID)
	SupersededBy string         `json:"superseded_by"`  // the newer check of the same working directory that dropped the plan
	ReconciledBy string         `json:"reconciled_by"`  // the reconcile that carries the plan
	CheckedAt    time.Time      `json:"checked_at"`
}

// ResourceDiff is one resource instance a plan names, with the top-level
// attributes that differ (names only: values may be sensitive).
type ResourceDiff struct {
	Address    string   `json:"address"`
	Action     string   `json:"action"`
	Attributes []string `json:"attributes,omitempty"`
}

// Proposal is what a gated run proposes to apply: the saved plan's digest,
// its change counts and the rules' decision on it.
type Proposal struct {
	Digest    string              `json:"digest"`    // "sha256:<hex>" of the saved plan file
	Add       int                 `json:"add"`       // resources the plan creates
	Change    int                 `json:"change"`    // resources updated in place
	Destroy   int                 `json:"destroy"`   // resources destroyed (replacements included)
	Replace   int                 `json:"replace"`   // resources replaced
	Forget    int                 `json:"forget"`    // resources removed from state without destroying
	Addresses map[string][]string `json:"addresses"` // action -> addresses
	Holds     []Hold              `json:"holds"`     // rules that hold it and why
	Refusals  []Hold              `json:"refusals"`  // rules that refuse it and why
	Findings  []Finding           `json:"findings"`  // configuration scan findings
	PlanText  string              `json:"plan_text"` // tofu's own rendering of the plan, masked
	Requested string              `json:"requested"` // who asked and how, a sentence
	Lineage   string              `json:"lineage"`   // state lineage the plan was made against
	Serial    int64               `json:"serial"`    // state serial the plan was made against
	Stage     Stage               `json:"stage"`     // "request" (held before planning) | "scan" | "plan"
	CreatedAt time.Time           `json:"created_at"`
	Used      bool                `json:"used"` // applied once; a second use is refused
	// Stale is set when the state the plan was made from no longer matches
	// the working directory's state: the proposal can never apply.
	Stale       bool   `json:"stale"`
	StaleReason string `json:"stale_reason"` // a sentence: what changed and what to do
	// StartFiles are the files under the working directory the plan was
	// made in that OpenTofu may read at start besides its configuration
	// (scan.InputFiles: variable files, files read with file()), relative
	// path to sha256 hex: the apply phase finds the same or starts nothing.
	StartFiles map[string]string `json:"start_files,omitempty"`
}

// Hold is a rule's decision on a proposal: which rule, why, who may release.
type Hold struct {
	Rule      string   `json:"rule"`
	Reason    string   `json:"reason"`
	Approvers []string `json:"approvers"` // user names and "group:NAME"; empty: anyone with the approve role
	// MinApprovals is how many different people the rule names must
	// approve the same digest before the hold is released; 0 (a hold
	// recorded before rules could say) means 1.
	MinApprovals int `json:"min_approvals,omitempty"`
}

// Need is the number of different approvals h waits for: MinApprovals, at
// least 1.
func (h Hold) Need() int { return max(h.MinApprovals, 1) }

// Credential is what a person or agent proved who they are with over SSH:
// a key listed in the configuration, or a certificate from a trusted user
// CA (a user_ca block). Recorded with every approval, rejection, launch and
// cancel, so a later review can tell the two apart.
type Credential struct {
	// Fingerprint is the SHA256 fingerprint of the public key the client
	// signed with (for a certificate, of the certified key).
	Fingerprint string `json:"fingerprint"`
	// CA names the user_ca block whose key signed the certificate; empty
	// for a listed key. The fields below are set only with CA.
	CA            string    `json:"ca,omitempty"`
	CAFingerprint string    `json:"ca_fingerprint,omitempty"` // SHA256 fingerprint of the CA key
	KeyID         string    `json:"key_id,omitempty"`
	Serial        uint64    `json:"serial,omitempty"`
	Principals    []string  `json:"principals,omitempty"`
	ValidAfter    time.Time `json:"valid_after,omitzero"`  // zero: valid since forever
	ValidBefore   time.Time `json:"valid_before,omitzero"` // zero: valid forever
}

// Finding is a configuration scan finding: an address and why it matters.
type Finding struct {
	Address string `json:"address"`        // e.g. module.network.data.external.lookup
	File    string `json:"file,omitempty"` // slash path relative to the checkout (or TF_ENCRYPTION)
	Line    int    `json:"line,omitempty"` // 1-based; 0 when unknown
	Reason  string `json:"reason"`
}

// Approval is one person's decision on a proposal, bound to its digest and stage.
type Approval struct {
	By       string    `json:"by"`
	Digest   string    `json:"digest"`
	Stage    Stage     `json:"stage"`
	Decision Decision  `json:"decision"`          // "approve" | "reject" | "pass" (no rule held it)
	Rules    []string  `json:"rules"`             // the holding rules this approval released
	Modules  string    `json:"modules,omitempty"` // the digest of the modules the scan read, for a scanned run
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
	// Credential is the key or certificate the decision was made with;
	// nil for one recorded before credentials were, or made by the server.
	Credential *Credential `json:"credential,omitempty"`
}

// Step is one tool process a run started (init, plan, show, apply).
type Step struct {
	Name     string    `json:"name"`
	ExitCode int       `json:"exit_code"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"` // none for a relay worker's step that never reported its end
}

// Chunk is a piece of a run's log: Data starting at byte Offset of the log.
type Chunk struct {
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// AuditEvent is one entry of the audit trail: who did what to which run.
// RunID is empty for events that concern no run.
type AuditEvent struct {
	At     time.Time `json:"at"`
	RunID  string    `json:"run_id"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Detail string    `json:"detail"`
	// Credential is the key or certificate the actor acted with, for a
	// person's or agent's approve, reject, launch and cancel; nil
	// otherwise (absent from the hashed payload then, so entries written
	// before it existed verify unchanged).
	Credential *Credential `json:"credential,omitempty"`
	// Filled when read: the entry's place in the chain, the hash of the
	// entry before it and its own (hex sha256; see DB.VerifyAudit).
	Seq  uint64 `json:"seq,omitempty"`
	Prev string `json:"prev,omitempty"`
	Hash string `json:"hash,omitempty"`
}

// WorkdirState is what the server last learnt of a working directory's
// state: its lineage and serial (read with `tofu state pull` after a run in
// the directory ended), which run it learnt it from and when. Lineage is
// empty for a directory with no state yet.
type WorkdirState struct {
	Lineage string    `json:"lineage"`
	Serial  int64     `json:"serial"`
	RunID   string    `json:"run_id"`
	At      time.Time `json:"at"`
}
