package api

import (
	"encoding/json"
	"time"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// The JSON contract (docs/json.md): every run a command prints with --json
// is the object RunView marshals to, whatever the command; times not yet
// known are left out, exit_code is left out until the run ended with a tool
// process's exit, lists are [] and maps {} (never null), requester_kind is
// "person", "agent" or "forge" as the text says, and a refusal is an object
// on stderr: {"error": {"code", "message", "field"?}}.

// Requester kinds as commands show them; the store writes the same words
// (store.RequesterPerson, store.RequesterAgent, store.RequesterForge) and
// reads a run stored as "user" by older versions as a person.
const (
	RequesterPerson = "person"
	RequesterAgent  = "agent"
	RequesterForge  = "forge"
)

// RequesterKind returns the vocabulary commands use for a stored
// requester_kind: "agent" for an agent, "forge" for a forge account (a
// pull request's author or merger), "person" for anything else.
func RequesterKind(stored string) string {
	switch stored {
	case RequesterAgent, RequesterForge:
		return stored
	}
	return RequesterPerson
}

// runWire is RunView as JSON: the fields the contract reshapes shadow the
// stored ones (a shallower field wins in encoding/json).
type runWire struct {
	wireView
	RequesterKind string            `json:"requester_kind"`
	Phase         string            `json:"phase"`
	ExitCode      *int              `json:"exit_code,omitempty"`
	StartedAt     time.Time         `json:"started_at,omitzero"`
	FinishedAt    time.Time         `json:"finished_at,omitzero"`
	Vars          map[string]string `json:"vars"`
	SecretVars    []string          `json:"secret_vars"`
	Answers       map[string]string `json:"answers"`
	Proposal      *store.Proposal   `json:"proposal,omitempty"`
	Approvals     []store.Approval  `json:"approvals"`
	Steps         []store.Step      `json:"steps"`
	Holds         []HoldView        `json:"holds"`
	Check         *store.Check      `json:"check,omitempty"`
	Scan          *store.Scan       `json:"scan,omitempty"`
	Changes       *changesWire      `json:"changes,omitempty"`
	Plan          *SavedPlan        `json:"plan,omitempty"`
	PullRequest   *pullRequestWire  `json:"pull_request,omitempty"`
}

// wireView is RunView without its MarshalJSON, so runWire can embed it.
type wireView RunView

// MarshalJSON writes v as the contract's run object (see runWire).
func (v RunView) MarshalJSON() ([]byte, error) {
	w := runWire{
		wireView:      wireView(v),
		RequesterKind: RequesterKind(string(v.RequesterKind)),
		Phase:         v.JSONPhase,
		StartedAt:     v.StartedAt,
		FinishedAt:    v.FinishedAt,
		Vars:          orEmptyMap(v.Vars),
		SecretVars:    OrEmpty(v.SecretVars),
		Answers:       orEmptyMap(v.Answers),
		Proposal:      normalProposal(v.Proposal),
		Approvals:     OrEmpty(v.Approvals),
		Steps:         OrEmpty(v.Steps),
		Holds:         OrEmpty(v.Holds),
		Check:         normalCheck(v.Check),
		Scan:          normalScan(v.Scan),
		Changes:       normalChanges(v.Changes),
		Plan:          v.Plan,
		PullRequest:   normalPullRequest(v.PullRequest),
	}
	if w.Plan == nil {
		w.Plan = PlanOf(v.Run)
	}
	for i := range w.Approvals {
		w.Approvals[i].Rules = OrEmpty(w.Approvals[i].Rules)
	}
	for i := range w.Holds {
		w.Holds[i].Approvers = OrEmpty(w.Holds[i].Approvers)
	}
	if store.Status(v.Status).Final() && v.ExitCode >= 0 {
		code := v.ExitCode
		w.ExitCode = &code
	}
	return json.Marshal(w)
}

// normalProposal returns a copy of p whose lists and maps are never nil.
func normalProposal(p *store.Proposal) *store.Proposal {
	if p == nil {
		return nil
	}
	cp := *p
	if cp.Addresses == nil {
		cp.Addresses = map[string][]string{}
	}
	cp.Holds, cp.Refusals, cp.Findings = OrEmpty(cp.Holds), OrEmpty(cp.Refusals), OrEmpty(cp.Findings)
	for i := range cp.Holds {
		cp.Holds[i].Approvers = OrEmpty(cp.Holds[i].Approvers)
	}
	for i := range cp.Refusals {
		cp.Refusals[i].Approvers = OrEmpty(cp.Refusals[i].Approvers)
	}
	return &cp
}

// normalCheck returns a copy of c whose lists are never nil.
func normalCheck(c *store.Check) *store.Check {
	if c == nil {
		return nil
	}
	cc := *c
	cc.Drift, cc.Changes = OrEmpty(cc.Drift), OrEmpty(cc.Changes)
	cc.Plan = normalProposal(cc.Plan)
	return &cc
}

// normalScan returns a copy of sc whose findings are never nil.
func normalScan(sc *store.Scan) *store.Scan {
	if sc == nil {
		return nil
	}
	cs := *sc
	cs.Findings = OrEmpty(cs.Findings)
	return &cs
}

// OrEmpty returns a copy of s, or an empty slice for nil, so JSON says []
// and the caller may change elements without touching the stored run.
func OrEmpty[T any](s []T) []T {
	return append(make([]T, 0, len(s)), s...)
}

// orEmptyMap returns m, or an empty map for nil, so JSON says {}.
func orEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// changesWire is a change set as the contract writes it: its lists [] when
// empty, where planview leaves them out (a shallower field wins).
type changesWire struct {
	*planview.ChangeSet
	Resources []resourceWire `json:"resources"`
	Outputs   []outputWire   `json:"outputs"`
	Drift     []resourceWire `json:"drift"`
}

// resourceWire is a resource change with its lists [] when empty.
type resourceWire struct {
	planview.Resource
	Actions      []string             `json:"actions"`
	ReplacePaths []string             `json:"replace_paths"`
	Attributes   []planview.Attribute `json:"attributes"`
}

// outputWire is an output change with its actions [] when empty.
type outputWire struct {
	planview.Output
	Actions []string `json:"actions"`
}

// ChangesJSON is change set cs as the contract writes it (the run object's
// "changes", and what `show RUN --changes --json` prints): a value to
// marshal, its lists [] when empty.
func ChangesJSON(cs *planview.ChangeSet) any { return normalChanges(cs) }

// normalChanges is cs as the contract writes it, or nil for none. The
// change set's own values are shared, not copied.
func normalChanges(cs *planview.ChangeSet) *changesWire {
	if cs == nil {
		return nil
	}
	outs := make([]outputWire, len(cs.Outputs))
	for i, o := range cs.Outputs {
		outs[i] = outputWire{Output: o, Actions: orNone(o.Actions)}
	}
	return &changesWire{ChangeSet: cs, Resources: resourcesWire(cs.Resources), Outputs: outs, Drift: resourcesWire(cs.Drift)}
}

// resourcesWire is rs with every list [] when empty.
func resourcesWire(rs []planview.Resource) []resourceWire {
	out := make([]resourceWire, len(rs))
	for i, r := range rs {
		out[i] = resourceWire{Resource: r, Actions: orNone(r.Actions), ReplacePaths: orNone(r.ReplacePaths), Attributes: orNone(r.Attributes)}
	}
	return out
}

// orNone is s, or an empty slice for nil (JSON []); unlike OrEmpty it
// shares s.
func orNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
