package server

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/store"
)

// The JSON contract (docs/json.md): every run a command prints with --json
// is the object runView marshals to, whatever the command; times not yet
// known are left out, exit_code is left out until the run ended with a tool
// process's exit, lists are [] and maps {} (never null), requester_kind is
// "person" or "agent" as the text says, and a refusal is an object on
// stderr: {"error": {"code", "message", "field"?}}.

// Requester kinds as commands show them. Runs stored before this contract
// say "user" for a person; requesterKind reads both.
const (
	requesterPerson = "person"
	requesterAgent  = "agent"
)

// requesterKind returns the vocabulary commands use for a stored
// requester_kind: "agent" for an agent, "person" for anything else (the
// store says "user").
func requesterKind(stored string) string {
	if stored == requesterAgent {
		return requesterAgent
	}
	return requesterPerson
}

// runWire is runView as JSON: the fields the contract reshapes shadow the
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
}

// wireView is runView without its MarshalJSON, so runWire can embed it.
type wireView runView

// MarshalJSON writes v as the contract's run object (see runWire).
func (v runView) MarshalJSON() ([]byte, error) {
	w := runWire{
		wireView:      wireView(v),
		RequesterKind: requesterKind(string(v.RequesterKind)),
		Phase:         v.JSONPhase,
		StartedAt:     v.StartedAt,
		FinishedAt:    v.FinishedAt,
		Vars:          orEmptyMap(v.Vars),
		SecretVars:    orEmpty(v.SecretVars),
		Answers:       orEmptyMap(v.Answers),
		Proposal:      normalProposal(v.Proposal),
		Approvals:     orEmpty(v.Approvals),
		Steps:         orEmpty(v.Steps),
		Holds:         orEmpty(v.Holds),
		Check:         normalCheck(v.Check),
		Scan:          normalScan(v.Scan),
	}
	for i := range w.Approvals {
		w.Approvals[i].Rules = orEmpty(w.Approvals[i].Rules)
	}
	for i := range w.Holds {
		w.Holds[i].Approvers = orEmpty(w.Holds[i].Approvers)
	}
	if statusOf(v.Run).Final() && v.ExitCode >= 0 {
		code := v.ExitCode
		w.ExitCode = &code
	}
	return json.Marshal(w)
}

// jsonPhase says what a run is doing or did with the tool, for JSON:
// "apply" once it applies (a released saved plan, or an apply no rule
// covers, which plans and applies in one step), "plan" otherwise.
func (s *Server) jsonPhase(r store.Run) string {
	if Phase(r.Phase) == phaseApply {
		return string(phaseApply)
	}
	if Kind(r.Kind) == KindApply && r.Proposal == nil && !gate.NeedsSavedPlan(s.currentRules(), s.gateRequest(r)) {
		return string(phaseApply)
	}
	return string(phasePlan)
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
	cp.Holds, cp.Refusals, cp.Findings = orEmpty(cp.Holds), orEmpty(cp.Refusals), orEmpty(cp.Findings)
	for i := range cp.Holds {
		cp.Holds[i].Approvers = orEmpty(cp.Holds[i].Approvers)
	}
	for i := range cp.Refusals {
		cp.Refusals[i].Approvers = orEmpty(cp.Refusals[i].Approvers)
	}
	return &cp
}

// normalCheck returns a copy of c whose lists are never nil.
func normalCheck(c *store.Check) *store.Check {
	if c == nil {
		return nil
	}
	cc := *c
	cc.Drift, cc.Changes = orEmpty(cc.Drift), orEmpty(cc.Changes)
	cc.Plan = normalProposal(cc.Plan)
	return &cc
}

// normalScan returns a copy of sc whose findings are never nil.
func normalScan(sc *store.Scan) *store.Scan {
	if sc == nil {
		return nil
	}
	cs := *sc
	cs.Findings = orEmpty(cs.Findings)
	return &cs
}

// orEmpty returns a copy of s, or an empty slice for nil, so JSON says []
// and the caller may change elements without touching the stored run.
func orEmpty[T any](s []T) []T {
	return append(make([]T, 0, len(s)), s...)
}

// orEmptyMap returns m, or an empty map for nil, so JSON says {}.
func orEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// errorWire is a refusal as JSON, on stderr.
type errorWire struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	} `json:"error"`
}

// Error codes that are not an *Error's: malformed words and failures whose
// detail only the operator log has.
const (
	errCodeUsage    = "usage"
	errCodeInternal = "internal"
)

// writeJSONError writes a refusal as one JSON object line on w.
func writeJSONError(w io.Writer, code, msg, field string) {
	var e errorWire
	e.Error.Code, e.Error.Message, e.Error.Field = code, msg, field
	b, err := json.Marshal(e)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":{"code":%q,"message":"internal error"}}`, errCodeInternal))
	}
	if sw, ok := w.(*safeWriter); ok {
		sw.Flush()
		w = sw.w
	}
	w.Write(append(jsonSafe(b), '\n'))
}
