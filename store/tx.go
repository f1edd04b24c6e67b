package store

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Tx is one write transaction of the store: the runs it creates and
// updates, the blobs it puts and deletes and the audit entries it appends
// (hash chain included) are committed together, or, when the function
// given to [DB.Update] returns an error, none of them. A state change and
// the audit entry that records it written through one Tx can never exist
// one without the other, whatever kills the process. A Tx is valid only
// inside the function it was given to and only on that goroutine.
type Tx struct {
	db    *DB
	tx    *bolt.Tx
	wrote []string // IDs of the runs created or updated, in order
}

// Update runs fn in one write transaction and commits it (fsynced) before
// it returns. fn's error is returned as is (so errors.Is works on it) and
// nothing fn did is stored; an error of the commit itself is wrapped.
// fn may run while other writers wait, so it must be quick and must not
// call the DB (only the Tx).
func (db *DB) Update(fn func(tx *Tx) error) error {
	var t *Tx
	err := db.bolt.Update(func(btx *bolt.Tx) error {
		t = &Tx{db: db, tx: btx}
		if err := fn(t); err != nil {
			return callerError{err}
		}
		if hook := db.commitHook.Load(); hook != nil && len(t.wrote) > 0 {
			wrote := slices.Clone(t.wrote)
			btx.OnCommit(func() { (*hook)(wrote) })
		}
		return nil
	})
	var ce callerError
	if errors.As(err, &ce) {
		return ce.err
	}
	if err != nil {
		return fmt.Errorf("committing to the store: %w", err)
	}
	return nil
}

// SetCommitHook makes fn (nil: nothing) be called right after every
// transaction made with [DB.Update] (and so CreateRun and UpdateRun) that
// created or updated a run commits, with the IDs of those runs, before the
// call that made it returns. It is for the fault
// suite, which stops the process at an exact commit.
func (db *DB) SetCommitHook(fn func(runs []string)) {
	if fn == nil {
		db.commitHook.Store(nil)
		return
	}
	db.commitHook.Store(&fn)
}

// commitHook is the type of DB.commitHook.
type commitHook = atomic.Pointer[func(runs []string)]

// GetRun returns the run with the given ID as this transaction sees it, or
// an error wrapping ErrNotFound.
func (t *Tx) GetRun(id string) (Run, error) {
	_, r, err := getRun(t.tx, id)
	return r, err
}

// CreateRun is [DB.CreateRunFunc] inside t: it assigns the next run ID,
// calls fn (may be nil) on the new run, stores it and writes it back into
// *r (what was stored only once t commits). fn's error is returned as is,
// *r is unchanged and the run is not stored; return the error from t's
// function so that the ID is not used up either.
func (t *Tx) CreateRun(r *Run, fn func(r *Run) error) error {
	if r == nil {
		return errors.New("creating run: nil run")
	}
	if r.ID != "" {
		return fmt.Errorf("creating run: ID %q already set; CreateRun assigns IDs (use UpdateRun for an existing run)", r.ID)
	}
	nr := *r
	if nr.CreatedAt.IsZero() {
		nr.CreatedAt = time.Now()
	}
	if nr.ExitCode == 0 {
		nr.ExitCode = -1
	}
	seq, err := t.tx.Bucket(bucketRuns).NextSequence()
	if err != nil {
		return fmt.Errorf("creating run: %w", err)
	}
	id := strconv.FormatUint(seq, 10)
	nr.ID = id
	if fn != nil {
		if err := fn(&nr); err != nil {
			return err
		}
		if nr.ID != id {
			return fmt.Errorf("creating run: the function changed the new run's ID to %q; IDs are assigned", nr.ID)
		}
	}
	if err := t.db.putRun(t.tx, be64(seq), &nr); err != nil {
		return fmt.Errorf("creating run: %w", err)
	}
	t.wrote = append(t.wrote, id)
	*r = nr
	return nil
}

// UpdateRun is [DB.UpdateRun] inside t: it reads run id, calls fn on it
// and writes the result, returning the run as written. fn's error is
// returned as is and the run is not written; fn must not change r.ID.
func (t *Tx) UpdateRun(id string, fn func(r *Run) error) (Run, error) {
	key, r, err := getRun(t.tx, id)
	if err != nil {
		return Run{}, err
	}
	if err := fn(&r); err != nil {
		return Run{}, err
	}
	if r.ID != id {
		return Run{}, fmt.Errorf("updating run %s: the update changed its ID to %q; IDs are fixed", id, r.ID)
	}
	if err := t.db.putRun(t.tx, key, &r); err != nil {
		return Run{}, fmt.Errorf("updating run %s: %w", id, err)
	}
	t.wrote = append(t.wrote, id)
	return r, nil
}

// PutBlob is [DB.PutBlob] inside t.
func (t *Tx) PutBlob(kind, key string, blob []byte) error {
	k, err := blobKey(kind, key)
	if err != nil {
		return fmt.Errorf("storing blob: %w", err)
	}
	if blob == nil {
		blob = []byte{}
	}
	if err := t.db.refuseEnded(t.tx, kind, key); err != nil {
		return fmt.Errorf("storing %s blob %s: %w", kind, key, err)
	}
	if err := t.tx.Bucket(bucketBlobs).Put(k, blob); err != nil {
		return fmt.Errorf("storing %s blob %s: %w", kind, key, err)
	}
	return nil
}

// DeleteBlob is [DB.DeleteBlob] inside t: a missing blob is not an error.
func (t *Tx) DeleteBlob(kind, key string) error {
	k, err := blobKey(kind, key)
	if err != nil {
		return fmt.Errorf("deleting blob: %w", err)
	}
	if err := t.tx.Bucket(bucketBlobs).Delete(k); err != nil {
		return fmt.Errorf("deleting %s blob %s: %w", kind, key, err)
	}
	return nil
}

// Audit is [DB.Audit] inside t: e is appended to the hash chain (At set
// to now if zero; Seq, Prev and Hash assigned) when t commits, and only
// then.
func (t *Tx) Audit(e AuditEvent) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.Seq, e.Prev, e.Hash = 0, "", ""
	b := t.tx.Bucket(bucketChain)
	b.FillPercent = 0.9
	if err := appendAudit(b, e); err != nil {
		return fmt.Errorf("auditing %s of run %q: %w", e.Action, e.RunID, err)
	}
	return nil
}
