package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// Identity is who asks, as the SSH key identified them.
type Identity struct {
	Name  string
	Agent bool
	Roles []string
}

// Has reports whether the identity holds role ("launch", "approve"). Agents
// hold no roles but may launch.
func (id Identity) Has(role string) bool {
	for _, r := range id.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// LaunchRequest is a run as a person or an agent asks for it.
type LaunchRequest struct {
	Template string
	Kind     string            // KindApply or KindPlan
	Answers  map[string]string // survey answers as typed: NAME -> VALUE
	// RequireApproval asks that the apply its plan proposes wait for a
	// person whatever the rules say (spec "A gated apply ...").
	RequireApproval bool
	// AIProposal marks an apply an AI proposed; it is handled as
	// RequireApproval.
	AIProposal bool
}

// Launch validates req for who, and queues the run: the survey answers are
// checked against their types, unknown variables and missing required
// answers are refused before anything is queued. An apply or plan an agent
// asks for is held before anything plans unless an exemption covers it (spec
// "An apply an AI agent asks for is the exception"). It returns the stored
// run; its errors are *Error for refusals.
func (s *Server) Launch(ctx context.Context, who Identity, req LaunchRequest) (store.Run, error) {
	if !who.Agent && !who.Has("launch") {
		return store.Run{}, errorf(ErrForbidden, "%s may not launch runs: the launch role is missing from user %q in the configuration", who.Name, who.Name)
	}
	t, ok := s.cfg.Templates[req.Template]
	if !ok {
		return store.Run{}, errorf(ErrNotFound, "no template %q; `templates` lists them", req.Template)
	}
	if req.Kind == "" {
		req.Kind = KindApply
	}
	if req.Kind == "check" {
		return store.Run{}, errorf(ErrInvalid, "drift checks are not available in this version; a dry run previews the same plan")
	}
	if req.Kind != KindApply && req.Kind != KindPlan {
		return store.Run{}, errorf(ErrInvalid, "unknown run kind %q: use a real run (apply) or --dry-run (plan)", req.Kind)
	}
	q := s.cfg.Queues[t.Queue]
	if q != nil && q.Pool != "" {
		return store.Run{}, errorf(ErrInvalid, "template %q runs on queue %q, which relay workers of pool %q execute; relay workers are not available in this version, so point the template at a queue the control node executes", t.Name, q.Name, q.Pool)
	}
	proj := s.cfg.Projects[t.Project]
	wd, err := exec.ResolveWorkingDir(proj.Path, t.Command)
	if err != nil {
		return store.Run{}, errorf(ErrInvalid, "template %q: %v", t.Name, err)
	}
	// An answer for a variable the configuration declares sensitive is a
	// secret too. A configuration the server cannot read for that makes
	// every answer a secret (fails closed).
	sensitive, serr := gate.SensitiveVariables(wd)
	isSecret := func(name string) bool { return serr != nil || slices.Contains(sensitive, name) }
	vars, secrets, err := resolveVars(t, req.Answers, isSecret)
	if err != nil {
		return store.Run{}, err
	}
	r := &store.Run{
		Template:        t.Name,
		Project:         t.Project,
		Tool:            t.Tool,
		Command:         t.Command,
		Queue:           t.Queue,
		Kind:            req.Kind,
		Requester:       who.Name,
		RequesterKind:   "user",
		RequireApproval: req.RequireApproval,
		AIProposal:      req.AIProposal,
		Vars:            vars,
		Status:          StatusQueued,
		Phase:           phasePlan,
		ExitCode:        -1,
		CreatedAt:       time.Now(),
	}
	if who.Agent {
		r.RequesterKind = "agent"
	}
	for name := range secrets {
		r.SecretVars = append(r.SecretVars, name)
	}
	sort.Strings(r.SecretVars)
	greq := s.gateRequest(*r)
	before := s.holdsBeforePlanning(greq)
	heldFirst := len(before) > 0
	err = s.db.CreateRunFunc(r, func(r *store.Run) error {
		if len(secrets) > 0 {
			plain, err := json.Marshal(secrets)
			if err != nil {
				return fmt.Errorf("encoding secret answers: %w", err)
			}
			if r.SealedVars, err = seal.Seal(s.key, r.ID, plain); err != nil {
				return fmt.Errorf("sealing secret answers: %w", err)
			}
		}
		if heldFirst {
			r.Status = StatusAwaitingApproval
			r.Message = "Held before anything plans: " + reasons(before) + ". Planning runs provider code with the run's credentials, so a person must release it first; approve it with the digest `show " + r.ID + "` gives."
			r.Proposal = &store.Proposal{
				Stage:     "request",
				Digest:    requestDigest(*r),
				Requested: requestedHow(*r),
				Holds:     before,
				CreatedAt: time.Now(),
			}
		}
		return nil
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("storing run: %w", err)
	}
	run := *r
	if !heldFirst {
		wd, err := s.workdir(run)
		if err != nil {
			s.finish(run.ID, StatusFailed, err.Error(), -1)
			return s.db.GetRun(run.ID)
		}
		s.sched.enqueue(job{runID: run.ID, workdir: wd})
	}
	s.broker.runChanged()
	s.audit(run.ID, who.Name, "launch", fmt.Sprintf("%s of template %s", run.Kind, run.Template))
	return run, nil
}

// holdsBeforePlanning returns why a run must wait for a person before
// anything plans, or nothing. An agent's run is held unless an exemption
// covers it (spec "An apply an AI agent asks for is the exception"; "An
// agent's plan waits for a person ... unless an exemption covers it"). A dry
// run that an approval rule covers is held too. A rule with exclude_dry_run
// may exempt a dry run only after the configuration scan has read it (spec
// "What a plan runs, and what the gate reads"); this version has no scan, so
// such a dry run is held as the real run it may be (the gate fails closed).
func (s *Server) holdsBeforePlanning(req gate.Request) []store.Hold {
	var holds []store.Hold
	if req.Agent && !req.Exempted {
		holds = append(holds, store.Hold{Rule: "agent", Reason: req.Requester + " is an agent and no exemption covers this run"})
	}
	if req.Kind != KindPlan {
		return holds
	}
	for _, r := range s.rules {
		full := *r
		full.ExcludeDryRun = false
		if !full.WouldHold(req) {
			continue
		}
		h := store.Hold{Rule: r.Name, Reason: "the rule requires approval for this dry run", Approvers: r.Approvers}
		if r.ExcludeDryRun {
			h.Reason = "exclude_dry_run exempts a plan only after the configuration scan reads it, and this version has no scan; held as the real run it may be"
		}
		holds = append(holds, h)
	}
	return holds
}

// resolveVars builds the run's variables from the template vars, survey
// defaults and answers: plain ones encoded as they reach TF_VAR_ (spec "How
// values reach the configuration"), sensitive answers apart.
func resolveVars(t *config.Template, answers map[string]string, isSecret func(name string) bool) (map[string]string, map[string]string, error) {
	fields := map[string]*config.SurveyField{}
	for _, f := range t.Survey {
		fields[f.Name] = f
	}
	var unknown []string
	for name := range answers {
		if fields[name] == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var known []string
		for _, f := range t.Survey {
			known = append(known, f.Name)
		}
		if len(known) == 0 {
			return nil, nil, errorf(ErrInvalid, "template %q has no survey fields, so it takes no --var (got %s)", t.Name, strings.Join(unknown, ", "))
		}
		return nil, nil, errorf(ErrInvalid, "template %q has no survey field %s; its fields are: %s", t.Name, strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	vars := map[string]string{}
	secrets := map[string]string{}
	for name, v := range t.Vars {
		enc, err := exec.EncodeVar(v)
		if err != nil {
			return nil, nil, errorf(ErrInvalid, "template %q var %q: %v", t.Name, name, err)
		}
		if isSecret(name) {
			secrets[name] = enc
		} else {
			vars[name] = enc
		}
	}
	for _, f := range t.Survey {
		if isSecret(f.Name) && !f.Sensitive {
			sf := *f
			sf.Sensitive = true
			f = &sf
		}
		var val any
		if a, ok := answers[f.Name]; ok {
			v, err := f.ParseAnswer(a)
			if err != nil {
				return nil, nil, errorf(ErrInvalid, "%v", err)
			}
			val = v
		} else if f.Default != nil {
			val = f.Default
		} else {
			return nil, nil, errorf(ErrInvalid, "survey field %q of template %q needs an answer: add --var %s=VALUE (type %s)", f.Name, t.Name, f.Name, f.Type)
		}
		enc, err := exec.EncodeVar(val)
		if err != nil {
			return nil, nil, errorf(ErrInvalid, "survey field %q: %v", f.Name, err)
		}
		if f.Sensitive {
			secrets[f.Name] = enc
			delete(vars, f.Name)
		} else {
			vars[f.Name] = enc
		}
	}
	return vars, secrets, nil
}

// requestDigest binds a request-stage approval to what was asked: the
// template, kind, requester and variables (sensitive answers by name only).
func requestDigest(r store.Run) string {
	b, _ := json.Marshal(struct {
		ID, Template, Kind, Requester string
		Vars                          map[string]string
		Secret                        []string
	}{r.ID, r.Template, r.Kind, r.Requester, r.Vars, r.SecretVars})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// requestedHow is the sentence that says who asked for a run and how.
func requestedHow(r store.Run) string {
	how := r.Requester + " (person)"
	if r.RequesterKind == "agent" {
		how = r.Requester + " (agent)"
	}
	switch {
	case r.AIProposal:
		how += ", as an AI proposal"
	case r.RequireApproval:
		how += ", with require_approval"
	}
	return how
}

// gateRequest describes a run to the gate.
func (s *Server) gateRequest(r store.Run) gate.Request {
	req := gate.Request{
		Template:        r.Template,
		Project:         r.Project,
		Kind:            r.Kind,
		Requester:       r.Requester,
		Agent:           r.RequesterKind == "agent",
		RequireApproval: r.RequireApproval,
		AIProposal:      r.AIProposal,
	}
	_, req.Exempted = gate.Exempt(s.exemptions, req)
	return req
}

// workdir resolves a run's working directory inside its checkout (DESIGN
// invariant 4), refusing escapes before any process starts.
func (s *Server) workdir(r store.Run) (string, error) {
	p, ok := s.cfg.Projects[r.Project]
	if !ok {
		return "", fmt.Errorf("project %q is no longer configured", r.Project)
	}
	wd, err := exec.ResolveWorkingDir(p.Path, r.Command)
	if err != nil {
		return "", fmt.Errorf("refusing working directory: %w", err)
	}
	return wd, nil
}
