package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func auditDB(t testing.TB, n int) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := db.Audit(AuditEvent{RunID: fmt.Sprint(i % 3), Actor: "alice", Action: "approve", Detail: fmt.Sprintf("plan sha256:%064d rule r%d", i, i)}); err != nil {
			t.Fatal(err)
		}
	}
	return db, path
}

// tamper changes the stored value of entry seq with fn, behind the store's
// back, as someone with the file would.
func tamper(t *testing.T, db *DB, fn func(b *bolt.Bucket) error) {
	t.Helper()
	if err := db.bolt.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketChain)) }); err != nil {
		t.Fatal(err)
	}
}

func TestAuditChainVerifies(t *testing.T) {
	db, _ := auditDB(t, 10)
	defer db.Close()
	n, err := db.VerifyAudit()
	if err != nil || n != 10 {
		t.Fatalf("VerifyAudit = %d, %v", n, err)
	}
	all, _ := db.AuditTrail(nil)
	for i, e := range all {
		if e.Seq != uint64(i+1) || len(e.Hash) != 64 || (i > 0 && e.Prev != all[i-1].Hash) || (i == 0 && e.Prev != "") {
			t.Errorf("entry %d: seq %d prev %q hash %q", i, e.Seq, e.Prev, e.Hash)
		}
	}
}

// Every single changed byte of every entry, its hash included, is caught,
// and the error names that entry.
func TestAuditChainCatchesEveryChangedByte(t *testing.T) {
	db, _ := auditDB(t, 4)
	defer db.Close()
	for seq := uint64(1); seq <= 4; seq++ {
		var orig []byte
		db.bolt.View(func(tx *bolt.Tx) error {
			orig = append([]byte{}, tx.Bucket(bucketChain).Get(be64(seq))...)
			return nil
		})
		for i := 0; i < len(orig); i++ {
			changed := append([]byte{}, orig...)
			changed[i] ^= 0x01
			tamper(t, db, func(b *bolt.Bucket) error { return b.Put(be64(seq), changed) })
			_, err := db.VerifyAudit()
			if !errors.Is(err, ErrAuditBroken) || !strings.Contains(err.Error(), fmt.Sprintf("at entry %d:", seq)) {
				t.Fatalf("byte %d of entry %d changed: %v", i, seq, err)
			}
		}
		tamper(t, db, func(b *bolt.Bucket) error { return b.Put(be64(seq), orig) })
	}
	if _, err := db.VerifyAudit(); err != nil {
		t.Fatalf("restored chain: %v", err)
	}
}

// Removing or swapping entries before the last breaks the chain.
func TestAuditChainCatchesRemovedAndSwappedEntries(t *testing.T) {
	db, _ := auditDB(t, 5)
	defer db.Close()
	var v2, v3 []byte
	db.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketChain)
		v2, v3 = append([]byte{}, b.Get(be64(2))...), append([]byte{}, b.Get(be64(3))...)
		return nil
	})
	tamper(t, db, func(b *bolt.Bucket) error { b.Put(be64(2), v3); return b.Put(be64(3), v2) })
	if _, err := db.VerifyAudit(); !errors.Is(err, ErrAuditBroken) || !strings.Contains(err.Error(), "entry 2") {
		t.Errorf("swapped entries: %v", err)
	}
	tamper(t, db, func(b *bolt.Bucket) error { b.Put(be64(2), v2); return b.Delete(be64(3)) })
	if _, err := db.VerifyAudit(); !errors.Is(err, ErrAuditBroken) || !strings.Contains(err.Error(), "entry 4") {
		t.Errorf("removed entry: %v", err)
	}
}

// Events recorded before the chain existed are chained at Open, in the
// order they were recorded.
func TestAuditMigratesTheOldTrail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		for i, run := range []string{"2", "1", "2"} {
			v, _ := json.Marshal(AuditEvent{RunID: run, Action: fmt.Sprintf("a%d", i)})
			seq, _ := b.NextSequence()
			b.Put(append(append([]byte(run), 0), be64(seq)...), v)
		}
		return nil
	})
	db.Close()
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, _ := db.AuditTrail(nil)
	var acts []string
	for _, e := range all {
		acts = append(acts, e.Action)
	}
	if strings.Join(acts, ",") != "a0,a1,a2" {
		t.Errorf("migrated trail = %v", acts)
	}
	if n, err := db.VerifyAudit(); n != 3 || err != nil {
		t.Errorf("VerifyAudit = %d, %v", n, err)
	}
}

// FuzzVerifyAudit: whatever bytes stand in for an entry, the verifier does
// not panic, and it accepts them only when they are what Audit would have
// written after the entry before.
func FuzzVerifyAudit(f *testing.F) {
	f.Add([]byte("x\n{}"), uint64(2))
	f.Add([]byte(""), uint64(1))
	f.Add([]byte("\n\n\n"), uint64(9))
	db, _ := auditDB(f, 3)
	f.Cleanup(func() { db.Close() })
	var good []byte
	db.bolt.View(func(tx *bolt.Tx) error { good = append([]byte{}, tx.Bucket(bucketChain).Get(be64(2))...); return nil })
	f.Add(good, uint64(2))
	f.Fuzz(func(t *testing.T, v []byte, seq uint64) {
		seq = seq%5 + 1
		var orig []byte
		db.bolt.View(func(tx *bolt.Tx) error { orig = append([]byte{}, tx.Bucket(bucketChain).Get(be64(seq))...); return nil })
		tamper(t, db, func(b *bolt.Bucket) error { return b.Put(be64(seq), v) })
		defer tamper(t, db, func(b *bolt.Bucket) error {
			if orig == nil {
				return b.Delete(be64(seq))
			}
			return b.Put(be64(seq), orig)
		})
		_, err := db.VerifyAudit()
		if err == nil && !bytes.Equal(v, orig) {
			t.Fatalf("entry %d replaced by %q verified", seq, v)
		}
		db.AuditTrail(nil) // must not panic either
	})
}
