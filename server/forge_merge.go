package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// merged proposes the apply a merge into the default branch asks for:
// the project's checkout is brought to the merge commit (only when no run
// executes in it and it has no local changes: otherwise the delivery
// waits, saying why on the pull request), held plans of the templates the
// merge changes are marked stale, and each affected template's apply is
// launched, requested by whoever merged, always held for a person with its
// saved plan. A pull request proposes its applies once: a redelivered or
// polled merge, or a restart, launches none again.
func (w forgeWork) merged(ctx context.Context) (string, error) {
	if w.ev.MergeSHA == "" {
		w.ev.MergeSHA = w.listedMerge(ctx)
	}
	pull, err := w.f.s.db.UpdatePull(w.fc.Name, w.ev.Repository, w.ev.Number, func(p *store.Pull) error {
		p.Merged, p.Closed = true, true
		p.MergeSHA, p.MergedBy = w.ev.MergeSHA, w.ev.Sender
		if p.Author == "" {
			p.Author = w.ev.Author
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	w.f.cancelPlans(w.ref(), "Cancelled: the pull request merged.")
	if w.ev.DefaultBranch != "" && w.ev.BaseRef != w.ev.DefaultBranch {
		return "merged into " + w.ev.BaseRef + ", not the default branch: nothing applies", nil
	}
	if w.ev.MergeSHA == "" || vcs.CheckRef(w.ev.MergeSHA) != nil {
		return "", errors.New("the merge delivery names no merge commit")
	}
	if branch, err := vcs.Branch(ctx, w.proj.Path); err != nil || branch != w.ev.BaseRef {
		w.f.note(w.ref(), fmt.Sprintf("The checkout of project %s is not on branch %s, which this pull request merged into, so nothing was proposed: check out %s there to apply what merges into it.", w.proj.Name, w.ev.BaseRef, w.ev.BaseRef))
		return "merged: the checkout is not on the branch merged into, nothing proposed", nil
	}
	runs, err := w.f.s.pullRuns(w.ref())
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		if r.Kind == KindApply {
			return "merged: its apply was proposed already (run " + r.ID + ")", nil
		}
	}
	from, err := w.moveCheckout(ctx, pull)
	if err != nil {
		return "", err
	}
	return w.proposeApplies(ctx, from, runs)
}

// cancelPlans cancels the plans of pull request ref that have not ended.
func (f *forgeSide) cancelPlans(ref pullRef, msg string) {
	runs, err := f.s.pullRuns(ref)
	if err != nil {
		f.s.log.Error("forge: listing a pull request's runs", "err", err)
		return
	}
	for _, r := range runs {
		if r.Kind == KindPlan && !r.Status.Final() {
			if err := f.s.endForForge(r.ID, msg, func(*store.PullRequest) {}); err != nil {
				f.s.log.Error("forge: cancelling a plan", "run", r.ID, "err", err)
			}
		}
	}
}

// moveCheckout fetches the default branch and fast-forwards the checkout
// to the merge commit, recording where it was first (so a restart between
// the move and the launch still knows what the merge changed). It returns
// the commit the checkout was at.
func (w forgeWork) moveCheckout(ctx context.Context, pull store.Pull) (string, error) {
	if pull.MovedFrom != "" {
		return pull.MovedFrom, nil
	}
	if id := w.f.s.runningIn(w.proj.Name); id != "" {
		return "", errWait{fmt.Sprintf("The checkout is not moved to merge commit %s yet: run %s executes in it. The apply is proposed once it ends.", short(w.ev.MergeSHA), id)}
	}
	c, err := w.f.client(ctx, w.fc)
	if err != nil {
		return "", err
	}
	base := w.ev.BaseRef
	if err := vcs.CheckBranch(base); err != nil {
		return "", err
	}
	if err := vcs.FetchRef(ctx, w.proj.Path, c.header, "+refs/heads/"+base+":refs/remotes/origin/"+base); err != nil {
		return "", fmt.Errorf("fetching the default branch: %s", w.f.scrub(err.Error()))
	}
	head, err := vcs.Head(ctx, w.proj.Path)
	if err != nil {
		return "", err
	}
	if head.Dirty {
		return "", errWait{fmt.Sprintf("The checkout of project %s has local changes (`git status` there lists them), so it is not moved to merge commit %s: commit them, or have the repository ignore what runs write there (a local terraform.tfstate and its backup, .terraform/, .terraform.lock.hcl), and the apply is proposed then.", w.proj.Name, short(w.ev.MergeSHA))}
	}
	if _, err := w.f.s.db.UpdatePull(w.fc.Name, w.ev.Repository, w.ev.Number, func(p *store.Pull) error {
		p.MovedFrom = head.SHA
		return nil
	}); err != nil {
		return "", err
	}
	if err := vcs.FastForward(ctx, w.proj.Path, w.ev.MergeSHA); err != nil {
		_, _ = w.f.s.db.UpdatePull(w.fc.Name, w.ev.Repository, w.ev.Number, func(p *store.Pull) error { p.MovedFrom = ""; return nil })
		if errors.Is(err, vcs.ErrNotFastForward) {
			w.f.note(w.ref(), fmt.Sprintf("The checkout of project %s is not behind merge commit %s, so it was not moved and nothing was proposed: bring it to the default branch by hand, then comment `%s` on a new pull request.", w.proj.Name, short(w.ev.MergeSHA), planCommand))
		}
		return "", err
	}
	w.f.s.audit("", forgeIdentity, "forge checkout", fmt.Sprintf("project %s moved from %s to merge commit %s of %s#%d", w.proj.Name, head.SHA, w.ev.MergeSHA, w.ev.Repository, w.ev.Number))
	return head.SHA, nil
}

// runningIn is a run executing in project's checkout now, or "".
func (s *Server) runningIn(project string) string {
	runs, err := s.db.ListRuns()
	if err != nil {
		return "?"
	}
	for _, r := range runs {
		if r.Project == project && r.Status == StatusRunning {
			return r.ID
		}
	}
	return ""
}

// proposeApplies marks stale the plans held for the templates the merge
// changes and launches each one's apply, held for a person whatever the
// rules say.
func (w forgeWork) proposeApplies(ctx context.Context, from string, runs []store.Run) (string, error) {
	files, err := vcs.ChangedFiles(ctx, w.proj.Path, from, w.ev.MergeSHA)
	if err != nil {
		return "", err
	}
	prefix, err := vcs.Prefix(ctx, w.proj.Path)
	if err != nil {
		return "", err
	}
	var launched []string
	for _, name := range sortedKeys(w.f.s.config().Templates) {
		t := w.f.s.config().Templates[name]
		if t.Project != w.proj.Name || !t.PullRequests || !touches(files, prefix, templateDirs(w.proj.Path, t)) {
			continue
		}
		w.f.staleHeld(t, w.ev.MergeSHA, w.ev.Number)
		id, err := w.launchApply(t, runs)
		if err != nil {
			return "", err
		}
		launched = append(launched, t.Name+" (run "+id+")")
	}
	w.f.note(w.ref(), "")
	if len(launched) == 0 {
		return "merged: no template with pull_requests = true is changed, nothing applies", nil
	}
	return "merged: proposed the apply of " + strings.Join(launched, ", "), nil
}

// staleHeld marks stale every plan held for template t's working
// directory: the checkout moved to merge commit sha, so they were made from
// configuration that is no longer there.
func (f *forgeSide) staleHeld(t *config.Template, sha string, number int) {
	held, err := f.s.heldInDir(f.s.runDir(store.Run{Project: t.Project, Command: t.Command}), "")
	if err != nil {
		f.s.log.Error("forge: finding held plans", "template", t.Name, "err", err)
		return
	}
	reason := fmt.Sprintf("the checkout moved to merge commit %s of pull request %d, so this plan was made from configuration no longer there; the apply that merge proposed replaces it", short(sha), number)
	for _, r := range held {
		if err := f.s.markStale(r, reason); err != nil {
			f.s.log.Error("forge: marking a held plan stale", "run", r.ID, "err", err)
		}
		if r.PullRequest != nil {
			f.markDirty(pullRef{r.PullRequest.Forge, r.PullRequest.Repository, r.PullRequest.Number})
		}
	}
}

// launchApply launches template t's apply for the merge, held for a person
// with its saved plan, to be compared with the pull request's plan of t
// last shown (the newest among runs that kept a change set).
func (w forgeWork) launchApply(t *config.Template, runs []store.Run) (string, error) {
	pr := &store.PullRequest{Forge: w.fc.Name, Repository: w.ev.Repository, Number: w.ev.Number,
		HeadSHA: w.ev.HeadSHA, MergeSHA: w.ev.MergeSHA, DeliveryID: w.ev.DeliveryID, Author: w.author()}
	for _, r := range runs {
		if r.Kind == KindPlan && r.Template == t.Name && r.DryPlan != nil && r.PullRequest.SupersededBy == "" {
			pr.ShownRun = r.ID
			break
		}
	}
	who := Identity{Name: w.ev.Sender, Forge: true}
	run, err := w.f.s.launch(who, LaunchRequest{Template: t.Name, Kind: KindApply, RequireApproval: true, PullRequest: pr}, "")
	if err != nil {
		return "", fmt.Errorf("launching template %s's apply: %w", t.Name, err)
	}
	w.f.s.audit(run.ID, forgeIdentity, "forge launch", fmt.Sprintf("apply of %s#%d merged at %s by %s, delivery %s", w.ev.Repository, w.ev.Number, w.ev.MergeSHA, w.ev.Sender, w.ev.DeliveryID))
	return run.ID, nil
}

// listedMerge is the merge commit the forge lists for the pull request,
// for a delivery that names none (GitLab's fast-forward and squash
// merges); "" when it lists none.
func (w forgeWork) listedMerge(ctx context.Context) string {
	c, err := w.f.client(ctx, w.fc)
	if err != nil {
		return ""
	}
	prs, err := c.MergedPullRequests(ctx, w.ev.Repository, time.Now().Add(-mergedWindow))
	if err != nil {
		return ""
	}
	for _, pr := range prs {
		if pr.Number == w.ev.Number {
			return pr.MergeSHA
		}
	}
	return ""
}
