package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// retryEvery is how soon a delivery that must wait (a merge whose checkout
// is busy or has local changes) is tried again.
const retryEvery = 5 * time.Second

// errWait is a delivery that cannot be acted on yet: it stays pending and
// is tried again after retryEvery, its sentence on the pull request.
type errWait struct{ why string }

func (e errWait) Error() string { return e.why }

// planCommand is the comment that plans a pull request's head again.
const planCommand = "switchtender plan"

// processLoop acts on stored deliveries until ctx ends: at start (what a
// previous process stored and never finished), whenever one is stored, and
// every retryEvery while one waits.
func (f *forgeSide) processLoop(ctx context.Context) {
	t := time.NewTicker(retryEvery)
	defer t.Stop()
	for {
		f.processPending(ctx)
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-t.C:
		}
	}
}

// processPending acts on every pending delivery in the order received. Of
// a pull request's pending heads only the newest is planned; the others
// are recorded as superseded. A merge that must wait holds back the merges
// of its project received after it, so they move the checkout in order.
func (f *forgeSide) processPending(ctx context.Context) {
	pending, err := f.s.db.PendingForgeDeliveries()
	if err != nil {
		f.s.log.Error("forge: listing pending deliveries", "err", err)
		return
	}
	evs, newest := f.readPending(pending)
	waiting := map[string]bool{}
	for i, d := range pending {
		if ctx.Err() != nil {
			return
		}
		ev := evs[i]
		if ev == nil {
			continue
		}
		ref := pullRef{d.Forge, ev.Repository, ev.Number}
		if ev.Kind == forge.KindMerged && waiting[ref.Forge+" "+strings.ToLower(ev.Repository)] {
			continue
		}
		outcome, err := f.act(ctx, d.Forge, *ev, newest[ref.key()])
		var w errWait
		if errors.As(err, &w) {
			waiting[ref.Forge+" "+strings.ToLower(ev.Repository)] = true
			f.note(ref, w.why)
			continue
		}
		if err != nil {
			outcome = "failed: " + err.Error()
			f.s.log.Warn("forge: a delivery could not be acted on", "forge", d.Forge, "delivery", d.DeliveryID, "err", f.scrub(err.Error()))
		}
		if err := f.s.db.FinishForgeDelivery(d.Forge, d.DeliveryID, f.scrub(outcome)); err != nil {
			f.s.log.Error("forge: finishing a delivery", "delivery", d.DeliveryID, "err", err)
		}
		f.markDirty(ref)
	}
}

// readPending decodes pending's events (nil for one that does not decode:
// it is finished as failed) and finds each pull request's newest pending
// head.
func (f *forgeSide) readPending(pending []store.ForgeDelivery) ([]*forge.Event, map[string]string) {
	evs := make([]*forge.Event, len(pending))
	newest := map[string]string{}
	for i, d := range pending {
		var ev forge.Event
		if err := json.Unmarshal(d.Event, &ev); err != nil {
			_ = f.s.db.FinishForgeDelivery(d.Forge, d.DeliveryID, "failed: the stored event does not decode")
			continue
		}
		evs[i] = &ev
		if ev.Kind == forge.KindOpened || ev.Kind == forge.KindPushed {
			newest[pullRef{d.Forge, ev.Repository, ev.Number}.key()] = ev.HeadSHA
		}
	}
	return evs, newest
}

// act does what delivery ev of forge block name asks and says what it did.
// newestHead is the newest head the pending deliveries name for its pull
// request ("" for none).
func (f *forgeSide) act(ctx context.Context, name string, ev forge.Event, newestHead string) (string, error) {
	fc, ok := f.s.config().Forges[name]
	if !ok {
		return "ignored: forge " + name + " is no longer configured", nil
	}
	proj := f.s.projectFor(name, ev.Repository)
	if proj == nil {
		return "ignored: no project names the repository", nil
	}
	fw := forgeWork{f: f, fc: fc, proj: proj, ev: ev}
	switch ev.Kind {
	case forge.KindOpened, forge.KindPushed:
		if newestHead != "" && ev.HeadSHA != newestHead {
			return fw.collapse(newestHead)
		}
		return fw.planHead(ctx, ev.HeadSHA, ev.Author, false)
	case forge.KindComment:
		return fw.comment(ctx)
	case forge.KindClosed:
		return fw.closed(ctx)
	case forge.KindMerged:
		return fw.merged(ctx)
	}
	return "ignored", nil
}

// forgeWork is one delivery being acted on: its forge block, its project
// and its event.
type forgeWork struct {
	f    *forgeSide
	fc   *config.Forge
	proj *config.Project
	ev   forge.Event
}

func (w forgeWork) ref() pullRef { return pullRef{w.fc.Name, w.ev.Repository, w.ev.Number} }

// comment plans the head again when the comment is `switchtender plan`
// from someone the forge says may push; any other comment, and the
// server's own, change nothing.
func (w forgeWork) comment(ctx context.Context) (string, error) {
	if strings.TrimSpace(w.ev.Comment) != planCommand || strings.HasPrefix(w.ev.Comment, forge.CommentMarker) {
		return "ignored: not a " + planCommand + " comment", nil
	}
	c, err := w.f.client(ctx, w.fc)
	if err != nil {
		return "", err
	}
	if self := w.f.selfLogin(ctx, w.fc, c); self != "" && strings.EqualFold(self, w.ev.Sender) {
		return "ignored: Switchtender's own comment", nil
	}
	ok, err := c.CanPush(ctx, w.ev.Repository, w.ev.Sender)
	if err != nil {
		return "", fmt.Errorf("reading whether %s may push: %w", w.ev.Sender, err)
	}
	if !ok {
		return "ignored: " + w.ev.Sender + " may not push to the repository, so may not ask for a plan", nil
	}
	head, fork, err := w.currentHead(ctx, c)
	if err != nil {
		return "", err
	}
	w.ev.HeadSHA, w.ev.Fork = head, fork
	return w.planHead(ctx, head, w.ev.Sender, true)
}

// currentHead is the pull request's head and whether it comes from a
// fork, as the forge lists it (a comment payload names neither; GitHub's
// says nothing of the head at all).
func (w forgeWork) currentHead(ctx context.Context, c client) (string, bool, error) {
	prs, err := c.OpenPullRequests(ctx, w.ev.Repository)
	if err != nil {
		return "", false, fmt.Errorf("listing open pull requests: %w", err)
	}
	for _, pr := range prs {
		if pr.Number == w.ev.Number {
			return pr.HeadSHA, pr.Fork, nil
		}
	}
	return "", false, errors.New("the pull request is not open: nothing to plan")
}

// note records why a pull request's delivery waits, for its comment.
func (f *forgeSide) note(ref pullRef, why string) {
	_, err := f.s.db.UpdatePull(ref.Forge, ref.Repository, ref.Number, func(p *store.Pull) error {
		if p.Note == why {
			return errUnchanged
		}
		p.Note = why
		return nil
	})
	if err == nil {
		f.markDirty(ref)
	}
}

// errUnchanged leaves a stored record as it was.
var errUnchanged = errors.New("unchanged")
