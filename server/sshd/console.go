package sshd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	bm "charm.land/wish/v2/bubbletea"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/tui"
)

// Console adapts the service to the TUI's Backend for one session's
// identity.
type Console struct {
	s  Service
	id api.Identity
}

// NewConsole is the console backend of svc for who, as a session with a
// terminal gets it.
func NewConsole(svc Service, who api.Identity) *Console { return &Console{s: svc, id: who} }

var _ tui.Backend = (*Console)(nil)

// serveTUI runs one Bubble Tea program for the session, sized to its
// terminal and following resizes (wish's bubbletea middleware).
func (d *Door) serveTUI(sess ssh.Session, id api.Identity) {
	pty, _, _ := sess.Pty()
	noColor := slices.ContainsFunc(sess.Environ(), func(e string) bool { return strings.HasPrefix(e, "NO_COLOR=") }) ||
		pty.Term == "dumb"
	handler := func(ssh.Session) (tea.Model, []tea.ProgramOption) {
		return tui.New(NewConsole(d.svc, id), tui.Options{
			Width: pty.Window.Width, Height: pty.Window.Height,
			NoColor: noColor, Context: sess.Context(),
		}), nil
	}
	bm.Middleware(handler)(func(ssh.Session) {})(sess)
}

func (c *Console) Identity() tui.Identity {
	return tui.Identity{
		Name: c.id.Name, Agent: c.id.Agent,
		CanLaunch:  c.id.Agent || c.id.Has("launch"),
		CanApprove: !c.id.Agent && c.id.Has("approve"),
	}
}

// userErr is what the console shows for err: its sentence. An internal
// error's detail goes to the operator log, which the sentence points to.
func (c *Console) userErr(op string, err error) error {
	if api.ErrorCode(err) == "internal" {
		c.s.Logger().Error("console action failed", "action", op, "identity", c.id.Name, "err", err)
	}
	return errors.New(api.UserMessage(err))
}

// summary is r's row: the server's status, whether r waits for this
// identity (s.waitingFor, the same test approve makes) and whether its plan
// is stale. A held run that can never be released (unapprovable) waits
// for no one and says why in its message.
func (c *Console) summary(r store.Run) tui.RunSummary {
	waiting, msg := c.s.WaitingFor(r, c.id), r.Message
	if why := c.s.Unapprovable(r); why != "" {
		waiting, msg = false, "Cannot be approved: "+why+"."
	}
	return tui.RunSummary{
		ID: r.ID, Template: r.Template, Kind: string(r.Kind), Status: string(r.Status),
		Requester: r.Requester, Agent: r.RequesterKind == store.RequesterAgent, Forge: r.RequesterKind == store.RequesterForge,
		CreatedAt: r.CreatedAt, WaitingForMe: waiting, Message: msg,
		Stale:       store.Status(r.Status) == store.StatusStale || (r.Proposal != nil && r.Proposal.Stale),
		PullRequest: pullRequest(r.PullRequest),
	}
}

// pullRequest is pr as the console shows it, or nil for none.
func pullRequest(pr *store.PullRequest) *tui.PullRequest {
	if pr == nil {
		return nil
	}
	return &tui.PullRequest{Forge: pr.Forge, Repository: pr.Repository, Number: pr.Number, HeadSHA: pr.HeadSHA, MergeSHA: pr.MergeSHA,
		SupersededBy: pr.SupersededBy, ShownRun: pr.ShownRun, Compared: pr.Compared, Differences: slices.Clone(pr.Differences)}
}

// fresh is r as the console should display it: a held plan whose working
// directory's state moved on is marked stale first (checkStale), and r is
// read again when that changed it.
func (c *Console) fresh(r store.Run) store.Run {
	if store.Status(r.Status) != store.StatusAwaitingApproval || r.Proposal == nil || r.Proposal.Stale {
		return r
	}
	if err := c.s.CheckStale(r); err != nil {
		c.s.Logger().Error("checking a held plan for staleness", "run", r.ID, "err", err)
		return r
	}
	if again, err := c.s.GetRun(r.ID); err == nil {
		return again
	}
	return r
}

func (c *Console) Runs(ctx context.Context) ([]tui.RunSummary, error) {
	runs, err := c.s.ListRuns()
	if err != nil {
		return nil, c.userErr("runs", fmt.Errorf("listing runs: %w", err))
	}
	out := make([]tui.RunSummary, 0, len(runs))
	for _, r := range runs {
		out = append(out, c.summary(c.fresh(r)))
	}
	return out, nil
}

func (c *Console) WatchRuns(ctx context.Context) <-chan struct{} {
	in, cancel := c.s.WatchRuns()
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}

// tuiActions maps the gate's action names to the console's.
var tuiActions = map[string]string{"create": "add", "update": "change", "delete": "destroy", "replace": "replace", "forget": "forget"}

// Run is run id's detail; a held plan is checked for staleness first.
func (c *Console) Run(ctx context.Context, id string) (tui.RunDetail, error) {
	r, err := c.s.Run(id)
	if err != nil {
		return tui.RunDetail{}, c.userErr("run", err)
	}
	r = c.fresh(r)
	d := tui.RunDetail{
		RunSummary: c.summary(r), Project: r.Project, Command: r.Command, Tool: r.Tool,
		Vars: map[string]string{}, ExitCode: r.ExitCode, PlannedBy: r.PlannedBy, AppliedBy: r.AppliedBy,
	}
	for k, v := range r.Vars {
		d.Vars[k] = v
	}
	for _, k := range r.SecretVars {
		d.Vars[k] = "(sensitive)"
	}
	switch {
	case r.DryPlan != nil: // what the dry run's plan would do (a scan hold it passed is its history)
		d.Proposal = c.dryPlan(r)
	case r.Proposal != nil:
		d.Proposal = c.proposal(r)
	}
	if store.Kind(r.Kind) == store.KindCheck {
		d.Check = c.check(r)
	}
	return d, nil
}

// proposal is r's proposal as the console shows it: counts, addresses by
// the console's action names, findings, every holding rule with its
// approvers and who released it, staleness and a newer proposal.
func (c *Console) proposal(r store.Run) *tui.Proposal {
	p := r.Proposal
	tp := &tui.Proposal{
		Digest: p.Digest, Stage: string(p.Stage), Add: p.Add, Change: p.Change, Destroy: p.Destroy,
		Replace: p.Replace, Forget: p.Forget, Requested: p.Requested, PlanText: p.PlanText,
		Addresses: map[string][]string{},
		Stale:     p.Stale, StaleReason: p.StaleReason, NewerRun: c.s.NewerProposal(r),
		Unapprovable: c.s.Unapprovable(r),
	}
	if p.Stage == store.StagePlan {
		tp.Changes = c.changes(r.ID)
	}
	for a, addrs := range p.Addresses {
		if n, ok := tuiActions[a]; ok {
			a = n
		}
		tp.Addresses[a] = append(tp.Addresses[a], addrs...)
	}
	for _, f := range p.Findings {
		tp.Findings = append(tp.Findings, tui.Finding{Address: f.Address, Where: findingWhere(f), Reason: f.Reason})
	}
	for _, h := range c.s.HoldViews(r) {
		tp.Holds = append(tp.Holds, tui.Hold{Rule: h.Rule, Reason: h.Reason,
			Approvers: slices.Clone(h.Approvers), ReleasedBy: h.ReleasedBy})
	}
	return tp
}

// dryPlan is the plan dry run r made, for the pane a held apply's proposal
// has: its digest, counts, change set and the scan's findings; it
// proposes nothing, so no rule holds it and there is no plan text (the
// run's log has tofu's).
func (c *Console) dryPlan(r store.Run) *tui.Proposal {
	p := r.DryPlan
	tp := &tui.Proposal{
		Digest: p.Digest, Stage: string(store.StagePlan), DryRun: true, Add: p.Add, Change: p.Change, Destroy: p.Destroy,
		Replace: p.Replace, Forget: p.Forget, Requested: api.RequestedHow(r), Addresses: map[string][]string{},
		Changes: c.changes(r.ID),
	}
	if r.Scan != nil {
		for _, f := range r.Scan.Findings {
			tp.Findings = append(tp.Findings, tui.Finding{Address: f.Address, Where: findingWhere(f), Reason: f.Reason})
		}
	}
	return tp
}

// changes is run id's change set for the proposal pane (the service keeps
// it decoded, so a refresh reads nothing again); nil when it has none or it
// cannot be read (logged).
func (c *Console) changes(id string) *planview.ChangeSet {
	cs, err := c.s.Changes(id)
	if err != nil {
		c.s.Logger().Error("reading a run's change set for the console", "run", id, "identity", c.id.Name, "err", err)
	}
	return cs
}

func (c *Console) FollowLog(ctx context.Context, id string, from int64) (<-chan tui.LogChunk, error) {
	if _, err := c.s.Run(id); err != nil {
		return nil, c.userErr("run", err)
	}
	ch := make(chan tui.LogChunk, 64)
	go func() {
		defer close(ch)
		_ = c.s.FollowLog(ctx, id, from, func(chunk store.Chunk) error {
			select {
			case ch <- tui.LogChunk{Offset: chunk.Offset, Data: chunk.Data}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return ch, nil
}

func (c *Console) Templates(ctx context.Context) ([]tui.Template, error) {
	var out []tui.Template
	for _, t := range api.SortedTemplates(c.s.Config()) {
		tt := tui.Template{Name: t.Name, Project: t.Project, Command: t.Command, Tool: t.Tool}
		for _, f := range t.Survey {
			tf := tui.Field{Name: f.Name, Type: f.Type, Description: f.Description, Choices: f.Choices, Sensitive: f.Sensitive}
			if f.Default != nil {
				tf.HasDefault = true
				tf.Default = api.AnswerText(f.Default)
			}
			tt.Survey = append(tt.Survey, tf)
		}
		out = append(out, tt)
	}
	return out, nil
}

func (c *Console) CheckAnswer(template, field, value string) error {
	t := c.s.Config().Templates[template]
	if t == nil {
		return fmt.Errorf("no template %q", template)
	}
	for _, f := range t.Survey {
		if f.Name == field {
			_, err := f.ParseAnswer(value)
			return err
		}
	}
	return fmt.Errorf("template %q has no survey field %q", template, field)
}

// launchRequest is the server's form of the console's request.
func launchRequest(req tui.LaunchRequest) api.LaunchRequest {
	return api.LaunchRequest{Template: req.Template, Kind: store.Kind(req.Kind), Answers: req.Answers}
}

// fieldErr is the console's form of a launch refusal: a *tui.FieldError
// when it is about one survey field, userErr's sentence otherwise.
func (c *Console) fieldErr(op string, err error) error {
	var e *api.Error
	if errors.As(err, &e) && e.Field != "" {
		return &tui.FieldError{Field: e.Field, Message: e.Msg}
	}
	return c.userErr(op, err)
}

// CheckLaunch is the server's launch validation (Server.CheckLaunch, as the
// SSH launch command makes it) for the console's launcher.
func (c *Console) CheckLaunch(ctx context.Context, req tui.LaunchRequest) error {
	if err := c.s.CheckLaunch(c.id, launchRequest(req)); err != nil {
		return c.fieldErr("launch", err)
	}
	return nil
}

func (c *Console) Launch(ctx context.Context, req tui.LaunchRequest) (string, error) {
	run, err := c.s.Launch(ctx, c.id, launchRequest(req))
	if err != nil {
		return "", c.fieldErr("launch", err)
	}
	return run.ID, nil
}

// Rerun repeats run id with the same answers (Server.Rerun) and returns the
// new run's ID.
func (c *Console) Rerun(ctx context.Context, id string) (string, error) {
	run, err := c.s.Rerun(ctx, c.id, id)
	if err != nil {
		return "", c.userErr("rerun", api.Coded(id, err))
	}
	return run.ID, nil
}

func (c *Console) Approve(ctx context.Context, id, digest string) error {
	if _, err := c.s.Approve(ctx, c.id, id, digest); err != nil {
		return c.userErr("run", api.Coded(id, err))
	}
	return nil
}

func (c *Console) Reject(ctx context.Context, id, reason string) error {
	if reason == "" {
		reason = "no reason given"
	}
	if _, err := c.s.Reject(ctx, c.id, id, reason); err != nil {
		return c.userErr("run", api.Coded(id, err))
	}
	return nil
}

func (c *Console) Cancel(ctx context.Context, id string) error {
	if _, err := c.s.Cancel(ctx, c.id, id); err != nil {
		return c.userErr("run", api.Coded(id, err))
	}
	return nil
}

// findingWhere is "file:line" for a finding that names its file, or "".
func findingWhere(f store.Finding) string {
	switch {
	case f.File == "":
		return ""
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}
