package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// DefaultPollEvery is how often a forge is polled when its block sets no
// poll_every.
const DefaultPollEvery = 5 * time.Minute

// mergedWindow is how far back a poll looks for merges.
const mergedWindow = 24 * time.Hour

// pollLoop polls each forge every poll_every until ctx ends (the first poll
// right at start).
func (f *forgeSide) pollLoop(ctx context.Context) {
	last := map[string]time.Time{}
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		for name, fc := range f.s.config().Forges {
			every := fc.PollEvery
			if every <= 0 {
				every = DefaultPollEvery
			}
			if time.Since(last[name]) >= every {
				last[name] = time.Now()
				f.poll(ctx, fc)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll lists forge block fc's open pull requests and recent merges for
// every project naming it, and stores a delivery of its own for each head
// or merge the store has not seen: the processor then treats it as the
// forge's delivery it stands for (their ids, "poll:…", make each one
// stored once).
func (f *forgeSide) poll(ctx context.Context, fc *config.Forge) {
	c, err := f.client(ctx, fc)
	if err != nil {
		f.s.log.Warn("forge: polling", "forge", fc.Name, "err", f.scrub(err.Error()))
		return
	}
	for _, p := range f.s.config().Projects {
		if p.Forge != fc.Name {
			continue
		}
		if err := f.pollProject(ctx, fc, c, p); err != nil {
			f.s.log.Warn("forge: polling", "forge", fc.Name, "repository", p.Repository, "err", f.scrub(err.Error()))
		}
	}
}

// pollProject catches up on project p's repository.
func (f *forgeSide) pollProject(ctx context.Context, fc *config.Forge, c client, p *config.Project) error {
	open, err := c.OpenPullRequests(ctx, p.Repository)
	if err != nil {
		return fmt.Errorf("listing open pull requests: %w", err)
	}
	for _, pr := range open {
		known, err := f.s.db.GetPull(fc.Name, p.Repository, pr.Number)
		if err == nil && (known.HeadSHA == pr.HeadSHA || slices.Contains(known.OlderHeads, pr.HeadSHA)) {
			continue
		}
		f.polled(fc, p, pr, forge.KindPushed, "poll:"+pr.HeadSHA)
	}
	merged, err := c.MergedPullRequests(ctx, p.Repository, time.Now().Add(-mergedWindow))
	if err != nil {
		return fmt.Errorf("listing merged pull requests: %w", err)
	}
	for _, pr := range merged {
		known, err := f.s.db.GetPull(fc.Name, p.Repository, pr.Number)
		if err == nil && known.Merged || err != nil && !errors.Is(err, store.ErrNotFound) {
			continue
		}
		f.polled(fc, p, pr, forge.KindMerged, "poll-merge:"+pr.MergeSHA)
	}
	return nil
}

// polled stores the delivery a poll makes of pull request pr.
func (f *forgeSide) polled(fc *config.Forge, p *config.Project, pr forge.PullRequest, kind forge.Kind, id string) {
	ev := forge.Event{Type: forge.Type(fc.Type), DeliveryID: id, Event: "poll", Action: string(kind), Kind: kind,
		Repository: p.Repository, Number: pr.Number, HeadSHA: pr.HeadSHA, HeadRef: pr.HeadRef, BaseRef: pr.BaseRef,
		MergeSHA: pr.MergeSHA, Author: pr.Author, Sender: pr.Author, Fork: pr.Fork}
	if kind == forge.KindMerged {
		ev.Sender = pr.MergedBy
		// A poll's list names no default branch: the checkout's branch
		// stands for it (merged() refuses a base that is not it anyway).
		ev.DefaultBranch, _ = vcs.Branch(context.Background(), p.Path)
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return
	}
	d := &store.ForgeDelivery{Forge: fc.Name, DeliveryID: id, Event: raw, Received: time.Now()}
	if err := f.s.db.AddForgeDelivery(d); err == nil {
		f.s.countDelivery(fc.Name, "polled")
		f.kick()
	}
}
