package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// reportDebounce gathers the changes of a pull request's runs that come
// together (a plan's steps) into one edit of its comment.
const reportDebounce = 100 * time.Millisecond

// markDirty asks the reporter to bring pull request ref's comment and
// statuses up to date.
func (f *forgeSide) markDirty(ref pullRef) {
	f.mu.Lock()
	f.dirty[ref.key()] = ref
	f.mu.Unlock()
	select {
	case f.dirt <- struct{}{}:
	default:
	}
}

// runChanged is told of every write of a run (Server.changed): a run the
// forge launched makes its pull request's report due.
func (f *forgeSide) runChanged(r store.Run) {
	if f == nil || r.PullRequest == nil {
		return
	}
	pr := r.PullRequest
	f.markDirty(pullRef{pr.Forge, pr.Repository, pr.Number})
}

// markOpenPulls makes every pull request the store knows with a run not
// ended due for a report: after a restart, statuses posted before it may
// be behind.
func (f *forgeSide) markOpenPulls() {
	pulls, err := f.s.db.ListPulls()
	if err != nil {
		f.s.log.Error("forge: listing pull requests", "err", err)
		return
	}
	for _, p := range pulls {
		if !p.Closed || p.Merged {
			f.markDirty(pullRef{p.Forge, p.Repository, p.Number})
		}
	}
}

// reportLoop reports due pull requests until ctx ends; one whose report
// failed (the forge did not answer) is tried again on the next change or
// after a minute.
func (f *forgeSide) reportLoop(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.dirt:
		case <-t.C:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(reportDebounce):
		}
		f.mu.Lock()
		due := f.dirty
		f.dirty = map[string]pullRef{}
		f.mu.Unlock()
		for _, ref := range due {
			if err := f.report(ctx, ref); err != nil {
				f.s.log.Warn("forge: reporting to a pull request", "forge", ref.Forge, "repository", f.scrub(ref.Repository), "number", ref.Number, "err", f.scrub(err.Error()))
				f.mu.Lock()
				if _, again := f.dirty[ref.key()]; !again {
					f.retry(ref)
				}
				f.mu.Unlock()
			}
		}
	}
}

// retry keeps ref due for the next tick; the caller holds f.mu.
func (f *forgeSide) retry(ref pullRef) { f.dirty[ref.key()] = ref }

// report writes pull request ref's comment (edited in place) and the
// commit statuses of its runs, each only when it changed since last
// written.
func (f *forgeSide) report(ctx context.Context, ref pullRef) error {
	fc, ok := f.s.config().Forges[ref.Forge]
	if !ok {
		return nil
	}
	pull, err := f.s.db.GetPull(ref.Forge, ref.Repository, ref.Number)
	if errors.Is(err, store.ErrNotFound) {
		return nil // a delivery about a pull request nothing planned: nothing to say
	}
	if err != nil {
		return err
	}
	runs, err := f.s.pullRuns(ref)
	if err != nil {
		return err
	}
	c, err := f.client(ctx, fc)
	if err != nil {
		return err
	}
	rep, statuses := f.buildReport(pull, runs)
	for _, st := range statuses {
		if err := f.postStatus(ctx, c, ref.Repository, st); err != nil {
			return err
		}
	}
	if len(rep.Plans) == 0 && len(rep.Applies) == 0 && rep.Note == "" {
		return nil
	}
	return f.postComment(ctx, c, pull, forge.RenderComment(rep, c.CommentLimit()))
}

// shaStatus is one commit status to post on a commit.
type shaStatus struct {
	sha string
	st  forge.Status
}

// postStatus posts st unless the same state and description were posted
// for its commit and context already.
func (f *forgeSide) postStatus(ctx context.Context, c client, repo string, st shaStatus) error {
	key := repo + " " + st.sha + " " + st.st.Context
	said := string(st.st.State) + " " + st.st.Description
	f.mu.Lock()
	same := f.posted[key] == said
	f.mu.Unlock()
	if same {
		return nil
	}
	if err := c.SetStatus(ctx, repo, st.sha, st.st); err != nil {
		return err
	}
	f.mu.Lock()
	f.posted[key] = said
	f.mu.Unlock()
	return nil
}

// postComment writes body as the pull request's one comment unless it is
// what was written last, and keeps the comment's id.
func (f *forgeSide) postComment(ctx context.Context, c client, pull store.Pull, body string) error {
	key := string(store.PullKey(pull.Forge, pull.Repository, pull.Number))
	f.mu.Lock()
	same := f.bodies[key] == body
	f.mu.Unlock()
	if same {
		return nil
	}
	id, err := c.UpsertComment(ctx, pull.Repository, pull.Number, pull.CommentID, body)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.bodies[key] = body
	f.mu.Unlock()
	if id != pull.CommentID {
		_, err = f.s.db.UpdatePull(pull.Forge, pull.Repository, pull.Number, func(p *store.Pull) error { p.CommentID = id; return nil })
	}
	return err
}

// buildReport is what pull request pull's comment shows, from its runs
// (newest first), and the statuses its commits get.
func (f *forgeSide) buildReport(pull store.Pull, runs []store.Run) (forge.Report, []shaStatus) {
	rep := forge.Report{Repository: pull.Repository, Number: pull.Number, HeadSHA: pull.HeadSHA,
		SSH: f.s.sshCommand(), Superseded: pull.OlderHeads, MergeSHA: pull.MergeSHA, Note: pull.Note}
	var statuses []shaStatus
	seen := map[string]bool{}
	for _, r := range runs {
		rr := f.runReport(r)
		pr := r.PullRequest
		switch {
		case r.Kind == KindApply && pr.MergeSHA != "":
			if seen["apply "+r.Template] {
				continue
			}
			seen["apply "+r.Template] = true
			rep.Applies = append(rep.Applies, rr)
			statuses = append(statuses, shaStatus{pr.MergeSHA, forge.StatusOf(rr, forge.ApplyContext(r.Template))})
		case r.Kind == KindPlan:
			key := "plan " + pr.HeadSHA + " " + r.Template
			if seen[key] {
				continue
			}
			seen[key] = true
			statuses = append(statuses, shaStatus{pr.HeadSHA, forge.StatusOf(rr, forge.PlanContext(r.Template))})
			if pr.HeadSHA == pull.HeadSHA {
				rep.Plans = append(rep.Plans, rr)
			}
		}
	}
	statuses = append(statuses, f.collapsedStatuses(pull, rep.Plans, seen)...)
	sort.Slice(rep.Plans, func(i, j int) bool { return rep.Plans[i].Template < rep.Plans[j].Template })
	sort.Slice(rep.Applies, func(i, j int) bool { return rep.Applies[i].Template < rep.Applies[j].Template })
	return rep, statuses
}

// collapsedStatuses are the superseded statuses of older heads no run
// planned (replaced before they were planned), for each template the
// newest head plans.
func (f *forgeSide) collapsedStatuses(pull store.Pull, plans []forge.RunReport, seen map[string]bool) []shaStatus {
	var out []shaStatus
	for _, old := range pull.OlderHeads {
		for _, p := range plans {
			if seen["plan "+old+" "+p.Template] {
				continue
			}
			rr := forge.RunReport{Template: p.Template, SupersededBy: pull.HeadSHA, Status: StatusCancelled}
			out = append(out, shaStatus{old, forge.StatusOf(rr, forge.PlanContext(p.Template))})
		}
	}
	return out
}

// runReport is run r as a pull request's comment and statuses show it.
func (f *forgeSide) runReport(r store.Run) forge.RunReport {
	rr := forge.RunReport{Template: r.Template, RunID: r.ID, Status: r.Status, Message: r.Message,
		SupersededBy: r.PullRequest.SupersededBy, Compared: r.PullRequest.Compared, Differences: r.PullRequest.Differences}
	if r.Scan != nil {
		rr.Findings = r.Scan.Findings
	}
	if p := r.DryPlan; p != nil {
		rr.Digest, rr.Add, rr.Change, rr.Destroy, rr.Replace, rr.Forget = p.Digest, p.Add, p.Change, p.Destroy, p.Replace, p.Forget
	}
	if p := r.Proposal; p != nil && p.Stage == StagePlan {
		rr.Digest, rr.Add, rr.Change, rr.Destroy, rr.Replace, rr.Forget = p.Digest, p.Add, p.Change, p.Destroy, p.Replace, p.Forget
		rr.Stale, rr.StaleReason = p.Stale, p.StaleReason
	}
	for _, a := range r.Approvals {
		switch a.Decision {
		case DecisionApprove:
			rr.ApprovedBy = a.By
		case DecisionReject:
			rr.RejectedBy = a.By
		}
	}
	if rr.Digest != "" {
		if cs, err := f.s.changesOf(r); err == nil {
			rr.Changes = cs
		}
	}
	if r.Kind == KindApply && r.PullRequest.ShownRun != "" && !r.PullRequest.Compared && rr.Changes != nil {
		rr.Compared, rr.Differences = f.compare(r, rr.Changes)
	}
	return rr
}

// compare records, on apply r, how its change set differs from the one of
// the plan last shown on its pull request, resource by resource.
func (f *forgeSide) compare(r store.Run, now *planview.ChangeSet) (bool, []string) {
	shown, err := f.s.getRun(r.PullRequest.ShownRun)
	if err != nil {
		return false, nil
	}
	was, err := f.s.changesOf(shown)
	if err != nil || was == nil {
		return false, nil
	}
	diffs := forge.CompareChanges(was, now)
	_, err = f.s.db.UpdateRun(r.ID, func(run *store.Run) error {
		run.PullRequest.Compared, run.PullRequest.Differences = true, diffs
		return nil
	})
	if err != nil {
		f.s.log.Error("forge: recording a comparison", "run", r.ID, "err", err)
	}
	return true, diffs
}

// sshCommand is how the comment's commands reach the SSH server:
// "ssh -p PORT HOST" from ssh_address (or ssh_listen).
func (s *Server) sshCommand() string {
	addr := s.config().Server.SSHAddress
	if addr == "" {
		addr = s.config().Server.SSHListen
		if a := s.SSHAddr(); a != "" {
			addr = a
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "ssh " + addr
	}
	if port == "22" {
		return "ssh " + host
	}
	return fmt.Sprintf("ssh -p %s %s", port, strings.Trim(host, "[]"))
}
