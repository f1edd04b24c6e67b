package server

import (
	"cmp"
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
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// Identity is who asks ([api.Identity]).
type Identity = api.Identity

// LaunchRequest is a run as a person or an agent asks for it
// ([api.LaunchRequest]).
type LaunchRequest = api.LaunchRequest

// launchPlan is a checked launch: everything Launch stores.
type launchPlan struct {
	t         *config.Template
	kind      Kind
	workdir   string
	workdirID string
	vals      surveyValues
	commit    *store.Commit // a pull request's commit, resolved from Ref
}

// CheckLaunch is the one validation of a launch, used by the launch command
// and the console's launcher before anything is queued: the identity may
// launch, the template exists and its working directory resolves inside
// its checkout, and every survey answer fits its field (an unknown field, a
// missing or empty required answer, a wrong type). A refusal about one
// field is an *Error whose Field names it.
func (s *Server) CheckLaunch(who Identity, req LaunchRequest) error {
	_, err := s.checkLaunch(who, req)
	return err
}

func (s *Server) checkLaunch(who Identity, req LaunchRequest) (*launchPlan, error) {
	who, err := s.current(who)
	if err != nil {
		return nil, err
	}
	if !who.Agent && !who.Forge && !who.Has("launch") {
		return nil, errorf(ErrForbidden, "%s may not launch runs: the launch role is missing from user %q in the configuration", who.Name, who.Name)
	}
	t, ok := s.config().Templates[req.Template]
	if !ok {
		return nil, errorf(ErrNotFound, "no template %q; `templates` lists them", req.Template)
	}
	kind, err := launchKind(req)
	if err != nil {
		return nil, err
	}
	if pool := s.poolOf(t.Name); pool != "" {
		return s.checkRelayLaunch(who, req, t, kind, pool)
	}
	wd, err := s.workdir(store.Run{Project: t.Project, Command: t.Command})
	if err != nil {
		return nil, errorf(ErrInvalid, "template %q: %v", t.Name, err)
	}
	vals, err := resolveVars(t, req.Answers, secretNames(wd, req.Secret))
	if err != nil {
		return nil, err
	}
	id, err := dirIdentity(wd)
	if err != nil {
		return nil, errorf(ErrInvalid, "template %q: reading its working directory: %v", t.Name, err)
	}
	lp := &launchPlan{t: t, kind: kind, workdir: wd, workdirID: id, vals: vals}
	if req.Ref != "" {
		if lp.commit, err = s.resolveRef(context.Background(), t.Project, req.Ref, kind); err != nil {
			return nil, err
		}
	}
	return lp, nil
}

// launchKind is the kind req asks for (an apply when empty), refusing one
// that cannot be launched or flags that do not go with it.
func launchKind(req LaunchRequest) (Kind, error) {
	kind := req.Kind
	if kind == "" {
		kind = KindApply
	}
	switch {
	case kind == KindReconcile:
		return "", errorf(ErrInvalid, "a reconcile is not launched: it is proposed from a drift check that kept a plan, with `reconcile CHECK`")
	case kind != KindApply && kind != KindPlan && kind != KindCheck:
		return "", errorf(ErrInvalid, "unknown run kind %q: use a real run (apply), --dry-run (plan) or --check (drift check)", kind)
	case kind == KindCheck && (req.RequireApproval || req.AIProposal):
		return "", errorf(ErrInvalid, "a drift check applies nothing, so --require-approval and --ai-proposal do not go with it; a reconcile proposed from it is always held for a person")
	}
	return kind, nil
}

// secretNames says which answers are secrets: those for a variable the
// configuration in wd declares sensitive, and those in also. A
// configuration the server cannot read for that makes every answer a
// secret (fails closed).
func secretNames(wd string, also []string) func(name string) bool {
	sensitive, err := gate.SensitiveVariables(wd)
	return func(name string) bool {
		return err != nil || slices.Contains(sensitive, name) || slices.Contains(also, name)
	}
}

// Launch validates req for who (CheckLaunch) and queues the run. An apply or
// plan an agent asks for is held before anything plans unless an exemption
// covers it (spec "An apply an AI agent asks for is the exception"). It
// returns the stored run; its refusals are *Error.
func (s *Server) Launch(ctx context.Context, who Identity, req LaunchRequest) (store.Run, error) {
	return s.launch(who, req, "")
}

// launch is Launch recording which run it repeats (rerunOf, or "").
func (s *Server) launch(who Identity, req LaunchRequest, rerunOf string) (store.Run, error) {
	lp, err := s.checkLaunch(who, req)
	if err != nil {
		return store.Run{}, err
	}
	t := lp.t
	r := &store.Run{
		Template:        t.Name,
		Project:         t.Project,
		Tool:            t.Tool,
		Command:         t.Command,
		Workdir:         lp.workdir,
		WorkdirID:       lp.workdirID,
		Queue:           t.Queue,
		Kind:            lp.kind,
		Requester:       who.Name,
		RequesterKind:   RequesterPerson,
		RequireApproval: req.RequireApproval,
		AIProposal:      req.AIProposal,
		Vars:            lp.vals.vars,
		Answers:         lp.vals.answers,
		RerunOf:         rerunOf,
		Commit:          lp.commit,
		Status:          StatusQueued,
		Phase:           phasePlan,
		ExitCode:        -1,
		CreatedAt:       time.Now(),
	}
	if who.Agent {
		r.RequesterKind = RequesterAgent
	}
	if who.Forge {
		r.RequesterKind, r.PullRequest = store.RequesterForge, req.PullRequest
	}
	for name := range lp.vals.secrets {
		r.SecretVars = append(r.SecretVars, name)
	}
	sort.Strings(r.SecretVars)
	before := s.holdsBeforePlanning(s.gateRequest(*r))
	if lp.kind == KindCheck {
		// At most one check of a working directory is pending at a time;
		// the lock makes the look and the store one step.
		s.checkMu.Lock()
		defer s.checkMu.Unlock()
		if id := s.pendingCheck(s.runDir(*r)); id != "" {
			return store.Run{}, errorf(ErrConflict, "check %s of this working directory is still queued, running or held; wait for it (`show %s`), so checks do not pile up", id, id)
		}
	}
	err = s.db.Update(func(tx *store.Tx) error { // the run and its launch entry, together
		err := tx.CreateRun(r, func(r *store.Run) error {
			if err := lp.vals.seal(s.key, r); err != nil {
				return err
			}
			if len(before) > 0 {
				holdRequest(r, before)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Audit(auditEvent(r.ID, who.Name, "launch", launchWhat(*r)))
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("storing run: %w", err)
	}
	run := *r
	s.changed(run) // before it is queued: its creation is reported before it runs
	if len(before) == 0 {
		s.enqueue(run)
	}
	return run, nil
}

// launchWhat is the detail of run r's launch entry: its kind and template,
// the ref of a pull request's plan and the run it repeats.
func launchWhat(r store.Run) string {
	what := fmt.Sprintf("%s of template %s", r.Kind, r.Template)
	if c := r.Commit; c != nil {
		what += fmt.Sprintf(", a pull request's plan of %s at %s", c.Ref, cmp.Or(c.SHA, "the commit the worker resolves it to"))
	}
	if r.RerunOf != "" {
		what += ", a rerun of run " + r.RerunOf
	}
	return what
}

// holdRequest holds a new run before anything plans, with a request-stage
// proposal its approvers release.
func holdRequest(r *store.Run, holds []store.Hold) {
	r.Status = StatusAwaitingApproval
	requestHold(r, holds)
}

// requestHold gives r the message and the request-stage proposal of a run
// held before anything plans; its status is the caller's.
func requestHold(r *store.Run, holds []store.Hold) {
	r.Message = "Held before anything plans: " + reasons(holds) + ". Planning runs provider code with the run's credentials, so a person must release it first; approve it with the digest `show " + r.ID + "` gives."
	r.Proposal = &store.Proposal{
		Stage:     StageRequest,
		Digest:    requestDigest(*r),
		Requested: requestedHow(*r),
		Holds:     holds,
		CreatedAt: time.Now(),
	}
}

// holdsBeforePlanning returns why a run must wait for a person before
// anything plans under the configuration now (liveConfig.holdsBeforePlanning).
func (s *Server) holdsBeforePlanning(req gate.Request) []store.Hold {
	return s.live.Load().holdsBeforePlanning(req)
}

// surveyValues are a launch's values: vars and secrets as they reach
// TF_VAR_, and the answers as typed (secret ones apart), kept for rerun.
type surveyValues struct {
	vars, secrets          map[string]string // encoded for TF_VAR_
	answers, secretAnswers map[string]string // every survey field's answer as typed, or its default
}

// seal seals the secret values into r, bound to its ID.
func (v surveyValues) seal(key *seal.Key, r *store.Run) error {
	var err error
	if len(v.secrets) > 0 {
		if r.SealedVars, err = sealMap(key, r.ID, v.secrets); err != nil {
			return fmt.Errorf("sealing secret answers: %w", err)
		}
	}
	if len(v.secretAnswers) > 0 {
		if r.SealedAnswers, err = sealMap(key, r.ID, v.secretAnswers); err != nil {
			return fmt.Errorf("sealing secret answers: %w", err)
		}
	}
	return nil
}

// resolveVars builds the run's variables from the template vars, survey
// defaults and answers: plain ones encoded as they reach TF_VAR_ (spec "How
// values reach the configuration"), sensitive answers apart. A refusal
// about one field is an *Error naming it in Field.
func resolveVars(t *config.Template, answers map[string]string, isSecret func(name string) bool) (surveyValues, error) {
	v := surveyValues{vars: map[string]string{}, secrets: map[string]string{}, answers: map[string]string{}, secretAnswers: map[string]string{}}
	if err := unknownFields(t, answers); err != nil {
		return v, err
	}
	for name, val := range t.Vars {
		enc, err := exec.EncodeVar(val)
		if err != nil && isSecret(name) {
			return v, errorf(ErrInvalid, "template %q var %q is sensitive and cannot be passed to the configuration; the operator must fix it in the configuration (the value is not repeated here)", t.Name, name)
		}
		if err != nil {
			return v, errorf(ErrInvalid, "template %q var %q: %v", t.Name, name, err)
		}
		if isSecret(name) {
			v.secrets[name] = enc
		} else {
			v.vars[name] = enc
		}
	}
	for _, f := range t.Survey {
		if err := v.answer(t, f, answers, isSecret(f.Name) || f.Sensitive); err != nil {
			return v, err
		}
	}
	return v, nil
}

// answer resolves one survey field into v.
func (v surveyValues) answer(t *config.Template, f *config.SurveyField, answers map[string]string, secret bool) error {
	if secret && !f.Sensitive {
		sf := *f
		sf.Sensitive = true
		f = &sf
	}
	a, given := answers[f.Name]
	var val any
	switch {
	case given && f.Required && strings.TrimSpace(a) == "":
		return fieldErrorf(f.Name, "survey field %q of template %q needs an answer: it has no default, and an empty answer is not one", f.Name, t.Name)
	case given:
		p, err := f.ParseAnswer(a)
		if err != nil {
			return fieldErrorf(f.Name, "%v", err)
		}
		val = p
	case f.Default != nil:
		val, a = f.Default, answerText(f.Default)
	default:
		return fieldErrorf(f.Name, "survey field %q of template %q needs an answer (a %s; it has no default)", f.Name, t.Name, f.Type)
	}
	enc, err := exec.EncodeVar(val)
	if err != nil && f.Sensitive {
		return fieldErrorf(f.Name, "survey field %q is sensitive and its answer cannot be passed to the configuration (a NUL byte or invalid UTF-8?); the answer is not repeated here", f.Name)
	}
	if err != nil {
		return fieldErrorf(f.Name, "survey field %q: %v", f.Name, err)
	}
	if f.Sensitive {
		v.secrets[f.Name], v.secretAnswers[f.Name] = enc, a
		delete(v.vars, f.Name)
	} else {
		v.vars[f.Name], v.answers[f.Name] = enc, a
	}
	return nil
}

// unknownFields refuses answers for fields the template's survey lacks.
func unknownFields(t *config.Template, answers map[string]string) error {
	var unknown, known []string
	for name := range answers {
		if !slices.ContainsFunc(t.Survey, func(f *config.SurveyField) bool { return f.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	for _, f := range t.Survey {
		known = append(known, f.Name)
	}
	if len(known) == 0 {
		return fieldErrorf(unknown[0], "template %q has no survey fields, so it takes no --var (got %s)", t.Name, strings.Join(unknown, ", "))
	}
	return fieldErrorf(unknown[0], "template %q has no survey field %s; its fields are: %s", t.Name, strings.Join(unknown, ", "), strings.Join(known, ", "))
}

// requestDigest binds a request-stage approval to what was asked: the
// template, kind, requester and variables (sensitive answers by name only).
func requestDigest(r store.Run) string {
	b, _ := json.Marshal(struct {
		ID, Template, Kind, Requester string
		Vars                          map[string]string
		Secret                        []string
	}{r.ID, r.Template, string(r.Kind), r.Requester, r.Vars, r.SecretVars})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// gateRequest describes a run to the gate under the configuration now.
func (s *Server) gateRequest(r store.Run) gate.Request { return s.live.Load().gateRequest(r) }

// pendingCheck returns a check of working directory dir that is queued,
// running or awaiting approval, or "".
func (s *Server) pendingCheck(dir string) string {
	runs, err := s.db.ListRuns()
	if err != nil {
		return ""
	}
	for _, r := range runs {
		st := r.Status
		if r.Kind == KindCheck && (st.Active() || st == StatusAwaitingApproval) && s.runDir(r) == dir {
			return r.ID
		}
	}
	return ""
}
