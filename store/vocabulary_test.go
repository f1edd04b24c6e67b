package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A move the table does not allow is a *TransitionError naming both
// statuses; a final status has nothing after it.
func TestTransitionErrorNamesBothStatuses(t *testing.T) {
	for from := range Transitions() {
		if from.Final() {
			t.Errorf("%s has followers but is final", from)
		}
	}
	err := StatusSucceeded.To(StatusRunning)
	var te *TransitionError
	if !errors.As(err, &te) || te.From != StatusSucceeded || te.To != StatusRunning {
		t.Fatalf("succeeded -> running: %v", err)
	}
	if !strings.Contains(err.Error(), "already ended (succeeded)") || !strings.Contains(err.Error(), "running") {
		t.Errorf("message %q", err)
	}
	if err := StatusQueued.To(StatusRunning); err != nil {
		t.Errorf("queued -> running: %v", err)
	}
	if len(StatusQueued.Next()) == 0 || len(StatusStale.Next()) != 0 {
		t.Error("Next disagrees with the table")
	}
}

// A run a data directory stored before "person" was written says
// requester_kind "user": it reads back as RequesterPerson, and the next
// write stores "person". An agent stays an agent.
func TestARunStoredAsUserReadsAsPerson(t *testing.T) {
	db := openTemp(t)
	r := newRun(t, db, "net")
	key, err := runKey(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	old := `{"id":"` + r.ID + `","template":"net","kind":"apply","phase":"plan","requester":"alice","requester_kind":"user","status":"queued"}`
	if err := db.bolt.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketRuns).Put(key, []byte(old)) }); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetRun(r.ID)
	if err != nil || got.RequesterKind != RequesterPerson || got.Status != StatusQueued || got.Kind != KindApply || got.Phase != PhasePlan {
		t.Fatalf("GetRun = %+v, %v; want requester_kind person", got, err)
	}
	if _, err := db.UpdateRun(r.ID, func(*Run) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := db.bolt.View(func(tx *bolt.Tx) error { raw = append([]byte(nil), tx.Bucket(bucketRuns).Get(key)...); return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"requester_kind":"person"`) || !strings.Contains(string(raw), `"status":"queued"`) {
		t.Errorf("rewritten record %s", raw)
	}
	var agent Run
	if err := json.Unmarshal([]byte(`{"requester_kind":"agent"}`), &agent); err != nil || agent.RequesterKind != RequesterAgent {
		t.Errorf("agent reads as %q, %v", agent.RequesterKind, err)
	}
}
