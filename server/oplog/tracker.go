// Package oplog holds what the operator log (docs/monitoring.md, "The operator log") is
// written from: the tracker that tells a run's status change from a
// repeated or late write, and the masker of the configuration's secrets
// that sentences bound for the log pass through.
package oplog

import (
	"slices"
	"sync"
	"time"

	"github.com/switchtender/switchtender/store"
)

// endedKeep is how long the tracker remembers a run after it ended, so that
// a late or repeated report of an earlier change is told apart from news.
const endedKeep = 10 * time.Minute

// Tracker keeps the status of every run that has not ended (and of runs
// that ended in the last endedKeep), fed by every status write: the
// operator log's transition records and the metrics' gauges come from it.
type Tracker struct {
	mu   sync.Mutex
	runs map[string]trackedRun
}

// trackedRun is a run as the tracker last saw it.
type trackedRun struct {
	status   store.Status
	at       time.Time   // when it entered status
	reported []time.Time // the StatusAt of its last few changes reported, to tell a repeat
}

// Transition is one status change the tracker accepted: from one status
// to another, entered at At.
type Transition struct {
	From, To store.Status
	At       time.Time
}

// statusAt is when r entered its status: StatusAt, or CreatedAt for a run
// stored before StatusAt was kept (or just created).
func statusAt(r store.Run) time.Time {
	if r.StatusAt.IsZero() {
		return r.CreatedAt
	}
	return r.StatusAt
}

// Seed records a run found at start without reporting it.
func (t *Tracker) Seed(r store.Run) {
	if store.Status(r.Status).Final() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]trackedRun{}
	}
	t.runs[r.ID] = trackedRun{status: store.Status(r.Status), at: statusAt(r), reported: []time.Time{statusAt(r)}}
}

// Note records r as written and reports whether it is a status change not
// reported before: false for a write that changed no status, a repeat, or
// a change to a run that ended before the tracker knew it. Changes of one
// run may arrive out of order (two goroutines write it one after the
// other, then report); each is reported once, and the tracker keeps the
// newest status.
func (t *Tracker) Note(r store.Run) (Transition, bool) {
	at, to := statusAt(r), store.Status(r.Status)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]trackedRun{}
	}
	e, known := t.runs[r.ID]
	switch {
	case known && slices.ContainsFunc(e.reported, at.Equal):
		return Transition{}, false
	case known && !at.After(e.at) && r.PrevStatus == "":
		return Transition{}, false
	case !known && r.PrevStatus == "" && to.Final():
		return Transition{}, false
	}
	from := store.Status(r.PrevStatus)
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
	return Transition{From: from, To: to, At: at}, true
}

// sweep forgets runs that ended more than endedKeep before now.
func (t *Tracker) sweep(now time.Time) {
	for id, e := range t.runs {
		if e.status.Final() && now.Sub(e.at) > endedKeep {
			delete(t.runs, id)
		}
	}
}

// Counts returns how many runs are in each non-final status, and when the
// longest-waiting held run entered awaiting_approval (zero if none).
func (t *Tracker) Counts() (map[store.Status]int, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := map[store.Status]int{}
	var oldest time.Time
	for _, e := range t.runs {
		if e.status.Final() {
			continue
		}
		n[e.status]++
		if e.status == store.StatusAwaitingApproval && (oldest.IsZero() || e.at.Before(oldest)) {
			oldest = e.at
		}
	}
	return n, oldest
}
