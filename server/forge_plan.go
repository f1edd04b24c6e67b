package server

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// planHead plans head, the pull request's newest head, with each template
// of the project that sets pull_requests and whose directory, or a local
// module it calls, the pull request changes: each as a pull-request plan
// (launch --dry-run --ref: a private tree, scanned first), requested by
// requester as a forge account. Older heads' runs are superseded. A head a
// template has planned already is not planned again unless force (a
// `switchtender plan` comment, which plans once per comment).
func (w forgeWork) planHead(ctx context.Context, head, requester string, force bool) (string, error) {
	pull, err := w.recordHead(head)
	if err != nil {
		return "", err
	}
	if pull.Closed || pull.Merged {
		return "ignored: the pull request is closed", nil
	}
	if pull.HeadSHA != head {
		return "superseded: a newer head " + pull.HeadSHA + " is known", nil
	}
	w.f.supersede(w.ref(), head)
	if pull.Fork && !w.proj.AllowForks {
		w.f.note(w.ref(), "This pull request comes from a fork, and project "+w.proj.Name+" does not plan forks (allow_forks = false): nothing was planned.")
		return "ignored: a fork's pull request, and allow_forks is off", nil
	}
	c, err := w.f.client(ctx, w.fc)
	if err != nil {
		return "", err
	}
	if err := w.fetch(ctx, c); err != nil {
		return "", err
	}
	templates, err := w.affected(ctx, head)
	if err != nil {
		return "", err
	}
	if len(templates) == 0 {
		return "planned nothing: no template with pull_requests = true has its directory or a local module changed", nil
	}
	var launched []string
	for _, t := range templates {
		id, err := w.launchPlan(t, head, requester, force)
		if err != nil {
			return "", err
		}
		launched = append(launched, t.Name+" (run "+id+")")
	}
	return "planned " + strings.Join(launched, ", "), nil
}

// recordHead stores head as the pull request's newest head, the one
// before it as an older head, with the author and fork the delivery names.
func (w forgeWork) recordHead(head string) (store.Pull, error) {
	return w.f.s.db.UpdatePull(w.fc.Name, w.ev.Repository, w.ev.Number, func(p *store.Pull) error {
		if w.ev.Author != "" {
			p.Author = w.ev.Author
		}
		if w.ev.Kind != forge.KindComment || w.ev.Fork {
			p.Fork = p.Fork || w.ev.Fork
		}
		if w.ev.Kind == forge.KindOpened {
			p.Closed = false
		}
		if b := w.ev.BeforeSHA; b != "" && b != head && b != p.HeadSHA && !slices.Contains(p.OlderHeads, b) {
			p.OlderHeads = append(p.OlderHeads, b)
		}
		switch {
		case p.HeadSHA == head:
		case slices.Contains(p.OlderHeads, head):
			// an older head delivered late: the newer one stays
		default:
			if p.HeadSHA != "" {
				p.OlderHeads = append(p.OlderHeads, p.HeadSHA)
			}
			p.HeadSHA, p.Note = head, ""
		}
		return nil
	})
}

// collapse records the head of a delivery that a newer pending delivery of
// the same pull request replaces: it is never planned, and its statuses
// say so.
func (w forgeWork) collapse(newest string) (string, error) {
	_, err := w.f.s.db.UpdatePull(w.fc.Name, w.ev.Repository, w.ev.Number, func(p *store.Pull) error {
		if w.ev.HeadSHA != p.HeadSHA && !slices.Contains(p.OlderHeads, w.ev.HeadSHA) {
			p.OlderHeads = append(p.OlderHeads, w.ev.HeadSHA)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return "superseded by " + newest + " before it was planned", nil
}

// fetch brings the pull request's head (and its base branch) into the
// project's checkout, from its remote origin, with the forge's token in
// git's environment only: the working tree is untouched.
func (w forgeWork) fetch(ctx context.Context, c client) error {
	spec := "+" + forge.FetchRef(forge.Type(w.fc.Type), w.ev.Number) + ":" + pullRefName(w.ev.Number)
	specs := []string{spec}
	if base := w.ev.BaseRef; base != "" && vcs.CheckBranch(base) == nil {
		specs = append(specs, "+refs/heads/"+base+":refs/remotes/origin/"+base)
	}
	if err := vcs.FetchRef(ctx, w.proj.Path, c.header, specs...); err != nil {
		return fmt.Errorf("fetching pull request #%d into project %s's checkout: %s", w.ev.Number, w.proj.Name, w.f.scrub(err.Error()))
	}
	return nil
}

// pullRefName is where the checkout keeps pull request n's fetched head.
func pullRefName(n int) string { return fmt.Sprintf("refs/switchtender/pull/%d", n) }

// affected lists the project's templates with pull_requests = true whose
// directory, or a local module its configuration in the checkout calls, a
// file the pull request changes lies in.
func (w forgeWork) affected(ctx context.Context, head string) ([]*config.Template, error) {
	base := "refs/remotes/origin/" + w.ev.BaseRef
	if vcs.CheckBranch(w.ev.BaseRef) != nil {
		base = "HEAD" // a comment names no base: the checkout's own branch stands for it
	}
	if _, err := vcs.Resolve(ctx, w.proj.Path, head); err != nil {
		return nil, fmt.Errorf("head %s is not in the checkout after the fetch (pushed over meanwhile?): %w", head, err)
	}
	files, err := vcs.ChangedFiles(ctx, w.proj.Path, base, head)
	if err != nil {
		return nil, err
	}
	prefix, err := vcs.Prefix(ctx, w.proj.Path)
	if err != nil {
		return nil, err
	}
	var out []*config.Template
	for _, name := range sortedKeys(w.f.s.config().Templates) {
		t := w.f.s.config().Templates[name]
		if t.Project != w.proj.Name || !t.PullRequests {
			continue
		}
		if touches(files, prefix, templateDirs(w.proj.Path, t)) {
			out = append(out, t)
		}
	}
	return out, nil
}

// templateDirs are the directories, relative to the checkout, of template
// t's working directory and of every module its configuration in the
// checkout calls by a local path (what the configuration scan reads).
func templateDirs(checkout string, t *config.Template) []string {
	dirs := []string{path.Clean(t.Command)}
	res, err := scan.Module(scan.Options{Root: checkout, Dir: filepath.Join(checkout, filepath.FromSlash(t.Command))})
	if err == nil {
		dirs = append(dirs, res.Dirs...)
	}
	return dirs
}

// touches reports whether a changed file (a path from the repository's
// top) lies under one of dirs (relative to the checkout, which is prefix
// in the repository).
func touches(files []string, prefix string, dirs []string) bool {
	for _, f := range files {
		rel, ok := strings.CutPrefix(f, prefix)
		if !ok {
			continue
		}
		for _, d := range dirs {
			if d == "." || rel == d || strings.HasPrefix(rel, d+"/") {
				return true
			}
		}
	}
	return false
}

// launchPlan launches template t's pull-request plan of head, unless one
// was launched for that head already (for the same comment, when force):
// what makes a redelivered or replayed delivery plan once. It returns the
// run's ID.
func (w forgeWork) launchPlan(t *config.Template, head, requester string, force bool) (string, error) {
	runs, err := w.f.s.pullRuns(w.ref())
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		pr := r.PullRequest
		if r.Kind == KindPlan && r.Template == t.Name && pr.HeadSHA == head && (!force || pr.DeliveryID == w.ev.DeliveryID) {
			return r.ID, nil
		}
	}
	pr := &store.PullRequest{Forge: w.fc.Name, Repository: w.ev.Repository, Number: w.ev.Number, HeadSHA: head, DeliveryID: w.ev.DeliveryID, Author: w.author()}
	who := Identity{Name: requester, Forge: true}
	run, err := w.f.s.launch(who, LaunchRequest{Template: t.Name, Kind: KindPlan, Ref: head, PullRequest: pr}, "")
	if err != nil {
		return "", fmt.Errorf("launching template %s's plan of %s: %w", t.Name, head, err)
	}
	w.f.s.audit(run.ID, forgeIdentity, "forge launch", fmt.Sprintf("plan of %s#%d at %s for %s, delivery %s", w.ev.Repository, w.ev.Number, head, requester, w.ev.DeliveryID))
	return run.ID, nil
}

// pullRuns lists the runs the forge launched for pull request ref, newest
// first.
func (s *Server) pullRuns(ref pullRef) ([]store.Run, error) {
	all, err := s.db.ListRuns()
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var out []store.Run
	for _, r := range all {
		if pr := r.PullRequest; pr != nil && pr.Forge == ref.Forge && pr.Number == ref.Number && strings.EqualFold(pr.Repository, ref.Repository) {
			out = append(out, r)
		}
	}
	return out, nil
}

// supersede marks every plan of pull request ref for a head other than
// head superseded by it, cancelling those not ended.
func (f *forgeSide) supersede(ref pullRef, head string) {
	runs, err := f.s.pullRuns(ref)
	if err != nil {
		f.s.log.Error("forge: listing a pull request's runs", "err", err)
		return
	}
	for _, r := range runs {
		if r.Kind != KindPlan || r.PullRequest.HeadSHA == head || r.PullRequest.SupersededBy != "" {
			continue
		}
		msg := fmt.Sprintf("Superseded by the pull request's newer head %s before it ended; nothing more runs for it.", short(head))
		if err := f.s.endForForge(r.ID, msg, func(pr *store.PullRequest) { pr.SupersededBy = head }); err != nil {
			f.s.log.Error("forge: superseding a run", "run", r.ID, "err", err)
		}
	}
}

// short is a commit SHA's first 12 digits.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// endForForge changes run id's pull request with mark and, unless it
// ended, cancels it with msg as the server's act: a queued or held run
// ends at once, a running one is interrupted and ends cancelled.
func (s *Server) endForForge(id, msg string, mark func(pr *store.PullRequest)) error {
	var running, ended bool
	_, err := s.updateAudited(id, func(r *store.Run) error {
		if r.PullRequest != nil {
			mark(r.PullRequest)
		}
		switch {
		case r.Status.Final():
			ended = true
			return nil
		case r.Status == StatusRunning:
			running = true
			if r.CancelRequested == "" {
				r.CancelRequested = forgeIdentity
			}
			return nil
		}
		r.Message = msg
		return setStatus(r, StatusCancelled)
	}, func(r store.Run) store.AuditEvent {
		return auditEvent(id, forgeIdentity, "forge cancel", msg)
	})
	if err != nil || ended {
		return err
	}
	s.sched.Cancel(id, cancelCause{by: forgeIdentity})
	if running {
		if dequeued, _ := s.relay.cancel(id); dequeued {
			_, err = s.endCancelled(id, forgeIdentity, msg)
		}
		return err
	}
	s.relay.dequeue(id)
	s.dropHeld(id)
	return nil
}

// closed cancels the plans of a pull request closed without merging.
func (w forgeWork) closed(ctx context.Context) (string, error) {
	_, err := w.f.s.db.UpdatePull(w.fc.Name, w.ev.Repository, w.ev.Number, func(p *store.Pull) error {
		p.Closed = true
		return nil
	})
	if err != nil {
		return "", err
	}
	runs, err := w.f.s.pullRuns(w.ref())
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		if r.Kind == KindPlan && !r.Status.Final() {
			if err := w.f.s.endForForge(r.ID, "Cancelled: the pull request was closed.", func(*store.PullRequest) {}); err != nil && !errors.Is(err, store.ErrNotFound) {
				return "", err
			}
		}
	}
	return "closed: its plans that had not ended were cancelled", nil
}

// author is the pull request's author: as the delivery names them, or as
// stored from an earlier delivery (a merge or comment payload may not).
func (w forgeWork) author() string {
	if w.ev.Author != "" {
		return w.ev.Author
	}
	p, _ := w.f.s.db.GetPull(w.fc.Name, w.ev.Repository, w.ev.Number)
	return p.Author
}
