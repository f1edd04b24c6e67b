package store

import (
	"errors"
	"slices"
	"testing"
)

// endedForTest is the server's notion of a final status, for these tests.
func endedForTest(status Status) bool {
	return !slices.Contains([]Status{StatusQueued, StatusRunning, StatusAwaitingApproval}, status)
}

// The write that ends a run deletes its sealed plan in the same
// transaction, whatever wrote it (DB.UpdateRun or Tx.UpdateRun in a transaction), and no
// plan is stored for a run that ended. Another kind (a drift check's kept plan) and
// another run's plan whose ID shares the prefix ("1" and "12") stay. The
// break it guards: a relay pool's apply ended through a path that did not
// drop the plan, which stayed in the store after the run ended.
func TestAnEndedRunDropsItsSealedPlanInTheSameWrite(t *testing.T) {
	db := openTemp(t)
	db.DropBlobsAtEnd(endedForTest, "plan")
	var runs []Run
	for range 12 {
		runs = append(runs, newRun(t, db, "t"))
	}
	one, twelve := runs[0], runs[11]
	for _, r := range []Run{one, twelve} {
		if err := db.PutBlob("plan", r.ID, []byte("sealed "+r.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutBlob("drift", one.ID, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRun(one.ID, func(r *Run) error { r.Status = "awaiting_approval"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetBlob("plan", one.ID); err != nil {
		t.Fatalf("a held run lost its plan: %v", err)
	}
	if err := db.Update(func(tx *Tx) error {
		_, err := tx.UpdateRun(one.ID, func(r *Run) error { r.Status = "failed"; return nil })
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetBlob("plan", one.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("run 1 ended failed and its sealed plan is still stored (%v)", err)
	}
	if _, err := db.GetBlob("plan", twelve.ID); err != nil {
		t.Errorf("run 12's plan went with run 1's: %v", err)
	}
	if _, err := db.GetBlob("drift", one.ID); err != nil {
		t.Errorf("a kind not named went with the run's end: %v", err)
	}
	if err := db.PutBlob("plan", one.ID, []byte("late")); !errors.Is(err, ErrConflict) {
		t.Errorf("a sealed plan stored for a run that ended: %v", err)
	}
	if _, err := db.GetBlob("plan", one.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused plan was stored (%v)", err)
	}
	if err := db.PutBlob("drift", one.ID, []byte("kept again")); err != nil {
		t.Errorf("a kind not named was refused for an ended run: %v", err)
	}
}

// Without DropBlobsAtEnd the store keeps every blob: the rule is the
// caller's, and a store opened by a tool that reads it changes nothing.
func TestAStoreWithoutTheRuleKeepsBlobsOfEndedRuns(t *testing.T) {
	db := openTemp(t)
	r := newRun(t, db, "t")
	if err := db.PutBlob("plan", r.ID, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRun(r.ID, func(r *Run) error { r.Status = "succeeded"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetBlob("plan", r.ID); err != nil {
		t.Errorf("a store without the rule dropped a blob: %v", err)
	}
}
