package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The audit trail is one hash chain over every event, in the order they
// were recorded: entry n is stored under key be64(n) as the hex sha256 of
// (the previous entry's hash || this entry's JSON), a newline, and the JSON
// itself, exactly as hashed. The first entry's previous hash is empty.
// Changing any byte of any entry's JSON or hash, or moving, inserting or
// removing an entry before the last, breaks the chain at that entry.
// Removing entries from the end, or rewriting entries and recomputing every
// later hash, is not detectable from the store alone (the hash has no key):
// keep the head hash (AuditHead) outside the store — the server logs it at
// every start, `audit verify` prints it — and verify against it (--head).

// ErrAuditBroken is wrapped by VerifyAudit's error when the chain does not
// verify.
var ErrAuditBroken = errors.New("the audit trail does not verify")

// Audit appends e to the audit trail (At set to now if zero; Seq, Prev and
// Hash are assigned). Events with an empty RunID concern no run.
func (db *DB) Audit(e AuditEvent) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.Seq, e.Prev, e.Hash = 0, "", ""
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketChain)
		b.FillPercent = 0.9
		return appendAudit(b, e)
	})
	if err != nil {
		return fmt.Errorf("auditing %s of run %q: %w", e.Action, e.RunID, err)
	}
	return nil
}

func appendAudit(b *bolt.Bucket, e AuditEvent) error {
	prev := ""
	if k, v := b.Cursor().Last(); k != nil {
		h, _, ok := bytes.Cut(v, []byte("\n"))
		if !ok {
			return fmt.Errorf("the last audit entry (%d) is malformed", binary.BigEndian.Uint64(k))
		}
		prev = string(h)
	}
	payload, err := json.Marshal(e)
	if err != nil {
		return err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v := append([]byte(chainHash(prev, payload)+"\n"), payload...)
	return b.Put(be64(seq), v)
}

func chainHash(prev string, payload []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil))
}

// migrateAudit moves events recorded before the chain existed into it, in
// the order they were recorded, and empties the old bucket.
func migrateAudit(tx *bolt.Tx) error {
	old := tx.Bucket(bucketAudit)
	type entry struct {
		seq uint64
		e   AuditEvent
	}
	var all []entry
	err := old.ForEach(func(k, v []byte) error {
		var e AuditEvent
		if len(k) < 8 || json.Unmarshal(v, &e) != nil {
			return nil
		}
		all = append(all, entry{binary.BigEndian.Uint64(k[len(k)-8:]), e})
		return nil
	})
	if err != nil || len(all) == 0 {
		return err
	}
	for i := 1; i < len(all); i++ { // insertion sort by seq: few entries, once
		for j := i; j > 0 && all[j].seq < all[j-1].seq; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	chain := tx.Bucket(bucketChain)
	for _, en := range all {
		if err := appendAudit(chain, en.e); err != nil {
			return fmt.Errorf("migrating the audit trail: %w", err)
		}
	}
	if err := tx.DeleteBucket(bucketAudit); err != nil {
		return err
	}
	_, err = tx.CreateBucket(bucketAudit)
	return err
}

// AuditLog returns the audit events of run runID in the order they were
// recorded (empty, not an error, for a run without events); runID "" gives
// the events that concern no run.
func (db *DB) AuditLog(runID string) ([]AuditEvent, error) {
	return db.AuditTrail(func(e AuditEvent) bool { return e.RunID == runID })
}

// AuditTrail returns the events keep accepts (all when keep is nil), in
// the order they were recorded, with Seq, Prev and Hash filled. It does not
// verify the chain; VerifyAudit does.
func (db *DB) AuditTrail(keep func(AuditEvent) bool) ([]AuditEvent, error) {
	var events []AuditEvent
	err := db.bolt.View(func(tx *bolt.Tx) error {
		prev := ""
		return tx.Bucket(bucketChain).ForEach(func(k, v []byte) error {
			e, hash, err := decodeAudit(k, v)
			if err != nil {
				return err
			}
			e.Prev, e.Hash = prev, hash
			prev = hash
			if keep == nil || keep(e) {
				events = append(events, e)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the audit trail: %w", err)
	}
	return events, nil
}

func decodeAudit(k, v []byte) (AuditEvent, string, error) {
	var e AuditEvent
	if len(k) != 8 {
		return e, "", fmt.Errorf("audit entry with a malformed key %x", k)
	}
	seq := binary.BigEndian.Uint64(k)
	h, payload, ok := bytes.Cut(v, []byte("\n"))
	if !ok {
		return e, "", fmt.Errorf("audit entry %d has no hash", seq)
	}
	if err := json.Unmarshal(payload, &e); err != nil {
		return e, "", fmt.Errorf("audit entry %d does not decode: %w", seq, err)
	}
	e.Seq = seq
	return e, string(h), nil
}

// VerifyAudit checks the whole chain and returns how many entries verified.
// The first entry that does not verify is named in an error wrapping
// ErrAuditBroken: its sequence number and what is wrong (its hash does not
// match its content and the entry before it, or its key is out of order).
func (db *DB) VerifyAudit() (int, error) {
	n := 0
	err := db.bolt.View(func(tx *bolt.Tx) error {
		prev := ""
		var last uint64
		return tx.Bucket(bucketChain).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("%w: the entry after %d has a malformed key %x", ErrAuditBroken, last, k)
			}
			seq := binary.BigEndian.Uint64(k)
			if seq != last+1 {
				return fmt.Errorf("%w at entry %d: expected entry %d next (an entry was removed or renumbered)", ErrAuditBroken, seq, last+1)
			}
			h, payload, ok := bytes.Cut(v, []byte("\n"))
			if !ok || string(h) != chainHash(prev, payload) {
				return fmt.Errorf("%w at entry %d: its hash does not match its content and the entry before it (it was changed)", ErrAuditBroken, seq)
			}
			if !json.Valid(payload) {
				return fmt.Errorf("%w at entry %d: its content is not JSON", ErrAuditBroken, seq)
			}
			prev, last = string(h), seq
			n++
			return nil
		})
	})
	return n, err
}

// AuditHead returns the last entry's sequence number and hash ("" for an
// empty trail): an anchor to keep outside the store. An entry rewritten at
// or before it, even with every later hash recomputed, changes it.
func (db *DB) AuditHead() (uint64, string, error) {
	var seq uint64
	var hash string
	err := db.bolt.View(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketChain).Cursor().Last()
		if k == nil {
			return nil
		}
		h, _, ok := bytes.Cut(v, []byte("\n"))
		if !ok || len(k) != 8 {
			return fmt.Errorf("%w: the last entry is malformed", ErrAuditBroken)
		}
		seq, hash = binary.BigEndian.Uint64(k), string(h)
		return nil
	})
	return seq, hash, err
}

// AuditHasAnchor reports whether the chain holds an entry with hash: an
// anchor kept outside the store (AuditHead) is still part of the chain,
// so nothing up to it was rewritten. Call VerifyAudit first.
func (db *DB) AuditHasAnchor(hash string) (bool, error) {
	found := false
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChain).ForEach(func(k, v []byte) error {
			if h, _, ok := bytes.Cut(v, []byte("\n")); ok && string(h) == hash {
				found = true
			}
			return nil
		})
	})
	return found, err
}
