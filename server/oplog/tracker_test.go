package oplog

import (
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
)

// The tracker reports each status change once, even when two changes of a
// run are reported in the other order, and keeps the newest status.
func TestRunTrackerOutOfOrder(t *testing.T) {
	var tr Tracker
	t0 := time.Now()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }
	run := func(prev, st store.Status, i int) store.Run {
		return store.Run{ID: "1", CreatedAt: t0, PrevStatus: prev, Status: st, StatusAt: at(i)}
	}
	steps := []struct {
		r    store.Run
		want string // "from>to", or "" for not reported
	}{
		{store.Run{ID: "1", CreatedAt: t0, Status: "queued"}, ">queued"},
		{run(store.StatusQueued, store.StatusRunning, 1), "queued>running"},
		{run(store.StatusAwaitingApproval, store.StatusQueued, 3), "awaiting_approval>queued"}, // the approver reports first
		{run(store.StatusRunning, store.StatusAwaitingApproval, 2), "running>awaiting_approval"},
		{run(store.StatusAwaitingApproval, store.StatusQueued, 3), ""}, // a repeat
		{run("", store.StatusQueued, 3), ""},                           // a write that changed no status
		{run(store.StatusQueued, store.StatusRunning, 4), "queued>running"},
		{run(store.StatusRunning, store.StatusSucceeded, 5), "running>succeeded"},
		{run("", store.StatusSucceeded, 5), ""},
	}
	for i, st := range steps {
		tn, ok := tr.Note(st.r)
		got := ""
		if ok {
			got = string(tn.From) + ">" + string(tn.To)
		}
		if got != st.want {
			t.Errorf("step %d: %q, want %q", i, got, st.want)
		}
		if i == 3 {
			if n, _ := tr.Counts(); n[store.StatusQueued] != 1 || n[store.StatusAwaitingApproval] != 0 {
				t.Errorf("after the late report the tracker holds %v, want the newer queued", n)
			}
		}
	}
	if n, oldest := tr.Counts(); len(n) != 0 || !oldest.IsZero() {
		t.Errorf("after the end: %v %v", n, oldest)
	}
}
