package store

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// changeAndAudit is the transaction the server makes for an approval: the
// run's status changes and its audit entry is appended.
func changeAndAudit(tx *Tx, id string) error {
	if _, err := tx.UpdateRun(id, func(r *Run) error { r.Status = "running"; return nil }); err != nil {
		return err
	}
	return tx.Audit(AuditEvent{RunID: id, Actor: "bob", Action: "approve", Detail: "plan"})
}

// stored reports run id's status and how many audit entries it has.
func stored(t *testing.T, db *DB, id string) (Status, int) {
	t.Helper()
	r, err := db.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	events, err := db.AuditLog(id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status, len(events)
}

// A run's change and its audit entry are stored together: both when the
// transaction commits, neither when its function fails after writing
// them, and neither when appending the entry fails after the run was
// written. Before, an approval committed the run's change and then wrote
// the entry in a second transaction, so a crash between the two left a
// released run with no approval in the audit trail.
func TestUpdateStoresARunChangeAndItsAuditEntryTogether(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	r := newRun(t, db, "app")
	boom := errors.New("boom")
	err := db.Update(func(tx *Tx) error {
		if err := changeAndAudit(tx, r.ID); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want the function's error as is", err)
	}
	if st, n := stored(t, db, r.ID); st != r.Status || n != 0 {
		t.Fatalf("after a failed transaction: status %q, %d entries; want %q and none", st, n, r.Status)
	}

	// The chain's last entry is malformed: the entry cannot be appended,
	// and the run's change goes with it.
	if err := db.Audit(AuditEvent{Action: "first"}); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.Update(func(btx *bolt.Tx) error { return btx.Bucket(bucketChain).Put(be64(1), []byte("no hash")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error { return changeAndAudit(tx, r.ID) }); err == nil {
		t.Fatal("Update appended to a malformed chain")
	}
	if got, err := db.GetRun(r.ID); err != nil || got.Status != r.Status {
		t.Fatalf("the run is %q (%v) though its audit entry was not written; want %q", got.Status, err, r.Status)
	}
	if err := db.bolt.Update(func(btx *bolt.Tx) error { return btx.Bucket(bucketChain).Delete(be64(1)) }); err != nil {
		t.Fatal(err)
	}

	if err := db.Update(func(tx *Tx) error { return changeAndAudit(tx, r.ID) }); err != nil {
		t.Fatal(err)
	}
	if st, n := stored(t, db, r.ID); st != "running" || n != 1 {
		t.Fatalf("after a committed transaction: status %q, %d entries; want running and one", st, n)
	}
}

// The commit hook is called once a transaction that wrote runs commits,
// with their IDs, and never for one rolled back or one that wrote no run.
func TestCommitHookNamesTheRunsACommitWrote(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	a := newRun(t, db, "a")
	var calls [][]string
	db.SetCommitHook(func(runs []string) { calls = append(calls, runs) })
	var created Run
	err := db.Update(func(tx *Tx) error {
		if err := tx.CreateRun(&created, nil); err != nil {
			return err
		}
		_, err := tx.UpdateRun(a.ID, func(*Run) error { return nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Update(func(tx *Tx) error {
		_, _ = tx.UpdateRun(a.ID, func(*Run) error { return nil })
		return errors.New("no")
	})
	_ = db.Audit(AuditEvent{Action: "no run"})
	if len(calls) != 1 || !slices.Equal(calls[0], []string{created.ID, a.ID}) {
		t.Fatalf("hook calls = %q, want one naming %s and %s", calls, created.ID, a.ID)
	}
}

// killEnv tells the test binary, re-executed, to be the process that
// changes a run and is killed: right after the commit, or inside the
// transaction before it commits.
const killEnv = "STORE_TEST_KILL_AT"

func TestMain(m *testing.M) {
	if at := os.Getenv(killEnv); at != "" {
		killedWriter(at, os.Getenv("STORE_TEST_DB"))
	}
	os.Exit(m.Run())
}

// killedWriter changes run 1 of the store at path and its audit entry in
// one transaction and SIGKILLs itself at "commit" (right after it) or
// "before" (inside it).
func killedWriter(at, path string) {
	db, err := Open(path)
	if err != nil {
		os.Exit(3)
	}
	kill := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	db.SetCommitHook(func([]string) { kill() })
	_ = db.Update(func(tx *Tx) error {
		if err := changeAndAudit(tx, "1"); err != nil {
			os.Exit(4)
		}
		if at == "before" {
			kill()
		}
		return nil
	})
	os.Exit(5) // the hook did not run
}

// A process SIGKILLed right after the commit leaves the change and its
// entry; one killed inside the transaction leaves neither; the chain
// verifies after both.
func TestKilledWriterLeavesTheChangeAndItsEntryOrNeither(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"commit", "before"} {
		path := filepath.Join(t.TempDir(), "s.db")
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r := newRun(t, db, "app")
		db.Close()
		cmd := osexec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killEnv+"="+at, "STORE_TEST_DB="+path)
		err = cmd.Run()
		var ee *osexec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("%s: the writer was not killed: %v", at, err)
		}
		db, err = Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, n := stored(t, db, r.ID)
		want, wantN := StatusRunning, 1
		if at == "before" {
			want, wantN = r.Status, 0
		}
		if st != want || n != wantN {
			t.Errorf("killed at %s: status %q with %d entries, want %q with %d", at, st, n, want, wantN)
		}
		if _, err := db.VerifyAudit(); err != nil {
			t.Errorf("killed at %s: %v", at, err)
		}
		db.Close()
	}
}
