package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/notify"
	"github.com/switchtender/switchtender/store"
)

// The operator log (README "Operations"): one record per run transition,
// approval, rejection, refusal, recovery action and reload, through the
// *slog.Logger in Options. Records carry names, statuses, digests and
// sentences the store already keeps, never a value; what a person typed is
// passed through scrub first.

// endedKeep is how long the tracker remembers a run after it ended, so that
// a late or repeated report of an earlier change is told apart from news.
const endedKeep = 10 * time.Minute

// runTracker keeps the status of every run that has not ended (and of runs
// that ended in the last endedKeep), fed by every status write: the
// operator log's transition records and the metrics' gauges come from it.
type runTracker struct {
	mu   sync.Mutex
	runs map[string]trackedRun
}

// trackedRun is a run as the tracker last saw it.
type trackedRun struct {
	status   Status
	at       time.Time   // when it entered status
	reported []time.Time // the StatusAt of its last few changes reported, to tell a repeat
}

// transitionNote is one status change the tracker accepted.
type transitionNote struct {
	from, to Status
	at       time.Time
}

// statusAt is when r entered its status: StatusAt, or CreatedAt for a run
// stored before StatusAt was kept (or just created).
func statusAt(r store.Run) time.Time {
	if r.StatusAt.IsZero() {
		return r.CreatedAt
	}
	return r.StatusAt
}

// seed records a run found at start without reporting it.
func (t *runTracker) seed(r store.Run) {
	if statusOf(r).Final() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]trackedRun{}
	}
	t.runs[r.ID] = trackedRun{status: statusOf(r), at: statusAt(r), reported: []time.Time{statusAt(r)}}
}

// note records r as written and reports whether it is a status change not
// reported before: false for a write that changed no status, a repeat, or
// a change to a run that ended before the tracker knew it. Changes of one
// run may arrive out of order (two goroutines write it one after the
// other, then report); each is reported once, and the tracker keeps the
// newest status.
func (t *runTracker) note(r store.Run) (transitionNote, bool) {
	at, to := statusAt(r), statusOf(r)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]trackedRun{}
	}
	e, known := t.runs[r.ID]
	switch {
	case known && slices.ContainsFunc(e.reported, at.Equal):
		return transitionNote{}, false
	case known && !at.After(e.at) && r.PrevStatus == "":
		return transitionNote{}, false
	case !known && r.PrevStatus == "" && to.Final():
		return transitionNote{}, false
	}
	from := Status(r.PrevStatus)
	if from == "" && known {
		from = e.status
	}
	if !known || at.After(e.at) {
		e.status, e.at = to, at
	}
	e.reported = append(e.reported[max(0, len(e.reported)-3):], at)
	t.runs[r.ID] = e
	if to.Final() {
		t.sweep(at)
	}
	return transitionNote{from: from, to: to, at: at}, true
}

// sweep forgets runs that ended more than endedKeep before now.
func (t *runTracker) sweep(now time.Time) {
	for id, e := range t.runs {
		if e.status.Final() && now.Sub(e.at) > endedKeep {
			delete(t.runs, id)
		}
	}
}

// counts returns how many runs are in each non-final status, and when the
// longest-waiting held run entered awaiting_approval (zero if none).
func (t *runTracker) counts() (map[Status]int, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := map[Status]int{}
	var oldest time.Time
	for _, e := range t.runs {
		if e.status.Final() {
			continue
		}
		n[e.status]++
		if e.status == StatusAwaitingApproval && (oldest.IsZero() || e.at.Before(oldest)) {
			oldest = e.at
		}
	}
	return n, oldest
}

// noteRun writes the operator log's record of a status change of r (and
// counts it in the metrics); changed calls it after every write of a run.
func (s *Server) noteRun(r store.Run) {
	tn, ok := s.runs.note(r)
	if !ok {
		return
	}
	level := slog.LevelInfo
	if tn.to == StatusFailed || tn.to == StatusInterrupted {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("run", r.ID), slog.String("template", r.Template), slog.String("kind", r.Kind),
		slog.String("requester", r.Requester), slog.String("requester_kind", r.RequesterKind),
		slog.String("from", string(tn.from)), slog.String("status", string(tn.to)),
		slog.Float64("duration_seconds", tn.at.Sub(r.CreatedAt).Seconds()),
	}
	if tn.to.Final() || tn.to == StatusAwaitingApproval {
		attrs = append(attrs, slog.String("message", s.scrub(r.Message)))
	}
	s.log.LogAttrs(context.Background(), level, "run "+string(tn.to), attrs...)
	s.notifyRun(r, tn)
	if tn.to.Final() {
		s.metrics.runsTotal.WithLabelValues(r.Template, r.Kind, string(tn.to)).Inc()
		s.metrics.runDuration.WithLabelValues(r.Template, r.Kind, string(tn.to)).Observe(tn.at.Sub(r.CreatedAt).Seconds())
	}
}

// notifyRun posts the deliveries a status change of r makes, if any.
func (s *Server) notifyRun(r store.Run, tn transitionNote) {
	event := notify.EventOf(r, tn.from, tn.to)
	if event == "" || s.notifier == nil {
		return
	}
	ds, err := notify.Deliveries(r, event, s.config().Notifies)
	if err != nil {
		s.log.Error("encoding a notification", "run", r.ID, "err", err)
		return
	}
	s.notifier.Post(ds...)
}

// scrub masks, in a sentence bound for the operator log, every static
// credential value and notify URL and secret the configuration holds (a
// sentence the store keeps holds no secret already; this guards what a
// person typed).
func (s *Server) scrub(text string) string { return s.live.Load().scrubber.String(text) }

// newScrubber is scrub's masker for cfg.
func newScrubber(cfg *config.Config) *mask.Masker {
	m := mask.New()
	for _, c := range cfg.Credentials {
		if c.Token != "" {
			m.Add(c.Token)
		}
		for _, v := range c.Env {
			m.Add(v)
		}
	}
	for _, t := range cfg.Templates {
		for _, f := range t.Survey {
			if f.Sensitive && f.Default != nil {
				m.Add(fmt.Sprint(f.Default)) // a secret's default, in clear in the file
			}
		}
	}
	for _, n := range cfg.Notifies {
		m.Add(n.URL, n.Secret)
		if u, err := url.Parse(n.URL); err == nil {
			// A webhook's token is usually its path or query: mask each
			// long enough to be one on its own.
			for _, part := range []string{u.Path, u.RawQuery, u.User.String()} {
				if len(part) >= 16 {
					m.Add(part)
				}
			}
		}
	}
	return m
}
