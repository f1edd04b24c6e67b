// Package store keeps Switchtender's state in one bbolt file: runs (with their
// proposals, approvals and steps), run log chunks, sealed blobs (sealed plans,
// kept drift-check plans) and the audit trail.
//
// Every write is one bbolt transaction, committed (fsynced) before the call
// returns, so a restart loses nothing a call acknowledged (DESIGN invariant
// 6). Every read-modify-write is a single transaction, so concurrent updates
// check-and-set rather than overwrite each other. Values are JSON. The file
// holds no secret in clear: plans and secret answers arrive already sealed
// (DESIGN invariant 3).
package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Errors usable with errors.Is.
var (
	// ErrNotFound: no run, blob or log with the given ID or key.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a check-and-set failed because the record is not in the
	// state the caller expected (an UpdateRun fn may return it, and
	// UpdateRun passes it through).
	ErrConflict = errors.New("conflict: the record changed or is not in the expected state")
	// ErrLocked: Open could not lock the database file within its timeout
	// because another process (or another Open in this one) holds it.
	ErrLocked = errors.New("database file is locked by another process")
)

// OpenTimeout is how long Open waits for the file lock before giving up.
const OpenTimeout = time.Second

var (
	bucketRuns  = []byte("runs")        // be64(id) -> JSON Run
	bucketLogs  = []byte("logs")        // be64(id) -> sub-bucket: be64(offset) -> bytes
	bucketBlobs = []byte("blobs")       // kind 0x00 key -> blob
	bucketAudit = []byte("audit")       // before the chain: runID 0x00 be64(seq) -> JSON AuditEvent; migrated at Open
	bucketChain = []byte("audit_chain") // be64(seq) -> hex(hash) '\n' JSON AuditEvent; see audit.go
	bucketDirs  = []byte("workdirs")    // working directory -> JSON WorkdirState
)

// DB is an open Switchtender database. It is safe for concurrent use.
type DB struct {
	bolt       *bolt.DB
	commitHook commitHook // see SetCommitHook

	// What ends with a run (DropBlobsAtEnd): set once, before the DB is
	// shared.
	ended    func(status Status) bool
	endKinds [][]byte
}

// DropBlobsAtEnd makes every write of a run whose Status ended reports
// true also delete, in the same transaction, the run's blobs of each of
// kinds (those keyed by its ID): what a run keeps only while it lasts, a
// sealed plan above all, cannot outlive the write that ends it, whichever
// code path or node ended it, and no crash can fall between the two. Call
// it once, after Open and before the DB is shared; a kind must be valid
// for PutBlob.
func (db *DB) DropBlobsAtEnd(ended func(status Status) bool, kinds ...string) {
	db.ended, db.endKinds = ended, nil
	for _, k := range kinds {
		db.endKinds = append(db.endKinds, append([]byte(k), 0))
	}
}

// Open opens (creating if missing) the database file at path with mode 0600,
// creating its parent directory with mode 0700 if missing, and creates all
// buckets. If another process holds the file it waits [OpenTimeout] and then
// returns an error wrapping [ErrLocked] that says so.
func Open(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("opening database: no path given")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening database: %w", err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: OpenTimeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("opening database %s: %w (waited %s); is another switchtender running with this data directory? Stop it or use another data_dir: %w", path, ErrLocked, OpenTimeout, err)
		}
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketRuns, bucketLogs, bucketBlobs, bucketAudit, bucketDirs, bucketChain, bucketNotify, bucketForgeDeliveries, bucketPulls} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("creating bucket %s: %w", name, err)
			}
		}
		return nil
	})
	if err == nil {
		err = b.Update(migrateAudit)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	return &DB{bolt: b}, nil
}

// Close closes the database, waiting for running transactions to finish.
func (db *DB) Close() error {
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("closing database: %w", err)
	}
	return nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.bolt.Path() }

func be64(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

// runKey turns a run ID ("1", "2", ... as CreateRun assigns) into its key. An
// ID that is not a canonical positive decimal is not found.
func runKey(id string) ([]byte, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != id {
		return nil, fmt.Errorf("run %q: %w (run IDs are numbers such as 12)", id, ErrNotFound)
	}
	return be64(n), nil
}

func getRun(tx *bolt.Tx, id string) ([]byte, Run, error) {
	key, err := runKey(id)
	if err != nil {
		return nil, Run{}, err
	}
	v := tx.Bucket(bucketRuns).Get(key)
	if v == nil {
		return nil, Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	var r Run
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, Run{}, fmt.Errorf("decoding run %s: %w", id, err)
	}
	return key, r, nil
}

// putRun writes r under key; a run that ended loses its blobs of the
// kinds DropBlobsAtEnd named, in the same transaction.
func (db *DB) putRun(tx *bolt.Tx, key []byte, r *Run) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding run %s: %w", r.ID, err)
	}
	if err := tx.Bucket(bucketRuns).Put(key, v); err != nil {
		return err
	}
	if db.ended == nil || !db.ended(r.Status) {
		return nil
	}
	blobs := tx.Bucket(bucketBlobs)
	for _, prefix := range db.endKinds {
		if err := blobs.Delete(append(bytes.Clone(prefix), r.ID...)); err != nil {
			return fmt.Errorf("dropping what run %s kept until it ended: %w", r.ID, err)
		}
	}
	return nil
}

// CreateRun stores a new run. r.ID must be empty: CreateRun assigns the next
// number of the runs sequence ("1", "2", ...; never reused) and writes it,
// with CreatedAt (set to now if zero) and ExitCode (set to -1 if 0, since a
// new run has no exited process), back into *r.
func (db *DB) CreateRun(r *Run) error { return db.CreateRunFunc(r, nil) }

// CreateRunFunc is CreateRun that, in the same transaction, calls fn (if not
// nil) on the run after its ID is assigned and before it is written: for what
// needs the ID, such as SealedVars sealed to the run (seal.Seal binds the run
// ID). If fn returns an error nothing is stored, *r is unchanged and the error
// is returned as is; the transaction is rolled back, so no ID is used up.
func (db *DB) CreateRunFunc(r *Run, fn func(r *Run) error) error {
	if r == nil {
		return errors.New("creating run: nil run")
	}
	nr, created := *r, false
	err := db.Update(func(tx *Tx) error {
		if err := tx.CreateRun(&nr, fn); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil && created {
		return fmt.Errorf("creating run: %w", err)
	}
	if err == nil {
		*r = nr
	}
	return err
}

// GetRun returns the run with the given ID, or an error wrapping ErrNotFound.
func (db *DB) GetRun(id string) (Run, error) {
	var r Run
	err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		_, r, err = getRun(tx, id)
		return err
	})
	return r, err
}

// ListRuns returns all runs, newest (highest ID) first.
func (db *DB) ListRuns() ([]Run, error) {
	var runs []Run
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRuns).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var r Run
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decoding run %d: %w", binary.BigEndian.Uint64(k), err)
			}
			runs = append(runs, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	return runs, nil
}

// UpdateRun reads run id, calls fn on it and writes the result, all in one
// transaction, and returns the run as written. If fn returns an error nothing
// is written and that error is returned as is (so errors.Is works on it). fn
// may run while other writers wait, so it must be quick and must not call the
// DB. fn must not change r.ID (an error if it does). Unknown id: ErrNotFound.
func (db *DB) UpdateRun(id string, fn func(r *Run) error) (Run, error) {
	var out Run
	err := db.Update(func(tx *Tx) error {
		var err error
		out, err = tx.UpdateRun(id, fn)
		return err
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

// callerError carries an error of an UpdateRun fn through bolt unchanged.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }
func (e callerError) Unwrap() error { return e.err }

// AppendLog appends data to run runID's log and returns the byte offset at
// which data starts. The chunk is stored under the run's log bucket keyed by
// that offset (big-endian), in one transaction with the check that the run
// exists; the log size is the end of the last chunk, so it is consistent by
// construction. Empty data stores nothing and returns the current size.
// Unknown run: ErrNotFound.
func (db *DB) AppendLog(runID string, data []byte) (offset int64, err error) {
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		key, err := runKey(runID)
		if err != nil {
			return err
		}
		if tx.Bucket(bucketRuns).Get(key) == nil {
			return fmt.Errorf("run %s: %w", runID, ErrNotFound)
		}
		lb, err := tx.Bucket(bucketLogs).CreateBucketIfNotExists(key)
		if err != nil {
			return err
		}
		lb.FillPercent = 1.0 // keys only ever grow: pack pages full
		offset = logSize(lb)
		if len(data) == 0 {
			return nil
		}
		return lb.Put(be64(uint64(offset)), data)
	})
	if err != nil {
		return 0, fmt.Errorf("appending to log of run %s: %w", runID, err)
	}
	return offset, nil
}

func logSize(lb *bolt.Bucket) int64 {
	if lb == nil {
		return 0
	}
	k, v := lb.Cursor().Last()
	if k == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(k)) + int64(len(v))
}

// logBucket returns run runID's log bucket (nil if it has no log yet), or
// ErrNotFound if there is no such run.
func logBucket(tx *bolt.Tx, runID string) (*bolt.Bucket, error) {
	key, err := runKey(runID)
	if err != nil {
		return nil, err
	}
	if tx.Bucket(bucketRuns).Get(key) == nil {
		return nil, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	return tx.Bucket(bucketLogs).Bucket(key), nil
}

// ReadLog returns run runID's log from byte offset from to its end, as the
// chunks stored: the first trimmed to start exactly at from, each Offset its
// position in the log. from at or past the end gives no chunks; a negative
// from is an error. The chunks' Data are copies the caller owns.
func (db *DB) ReadLog(runID string, from int64) ([]Chunk, error) {
	if from < 0 {
		return nil, fmt.Errorf("reading log of run %s: negative offset %d", runID, from)
	}
	var chunks []Chunk
	err := db.bolt.View(func(tx *bolt.Tx) error {
		lb, err := logBucket(tx, runID)
		if err != nil || lb == nil {
			return err
		}
		c := lb.Cursor()
		k, v := c.Seek(be64(uint64(from)))
		if k == nil || int64(binary.BigEndian.Uint64(k)) > from {
			// from lies inside the chunk before (the log starts with a
			// chunk at 0, so there is one unless the log is empty).
			if k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		for ; k != nil; k, v = c.Next() {
			off := int64(binary.BigEndian.Uint64(k))
			end := off + int64(len(v))
			if end <= from {
				continue
			}
			if off < from {
				v = v[from-off:]
				off = from
			}
			chunks = append(chunks, Chunk{Offset: off, Data: bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading log of run %s: %w", runID, err)
	}
	return chunks, nil
}

// LogSize returns the length in bytes of run runID's log (0 before any
// append). Unknown run: ErrNotFound.
func (db *DB) LogSize(runID string) (int64, error) {
	var n int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		lb, err := logBucket(tx, runID)
		n = logSize(lb)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("log size of run %s: %w", runID, err)
	}
	return n, nil
}

func blobKey(kind, key string) ([]byte, error) {
	if kind == "" || bytes.IndexByte([]byte(kind), 0) >= 0 {
		return nil, fmt.Errorf("blob kind %q must be non-empty without NUL bytes (for example \"plan\" or \"drift\")", kind)
	}
	if key == "" {
		return nil, fmt.Errorf("blob of kind %s: empty key", kind)
	}
	return append(append([]byte(kind), 0), key...), nil
}

// PutBlob stores blob under (kind, key), replacing any earlier one: sealed
// plans as ("plan", runID), kept drift-check plans as ("drift", the
// check's run ID). Blobs are stored as given; seal them first. A blob of a
// kind DropBlobsAtEnd named, for a run that already ended, is refused with
// an error wrapping ErrConflict.
func (db *DB) PutBlob(kind, key string, blob []byte) error {
	k, err := blobKey(kind, key)
	if err != nil {
		return fmt.Errorf("storing blob: %w", err)
	}
	if blob == nil {
		blob = []byte{}
	}
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := db.refuseEnded(tx, kind, key); err != nil {
			return err
		}
		return tx.Bucket(bucketBlobs).Put(k, blob)
	}); err != nil {
		return fmt.Errorf("storing %s blob %s: %w", kind, key, err)
	}
	return nil
}

// refuseEnded refuses a blob of a kind DropBlobsAtEnd named for a run that
// already ended: it would outlive the run's end (a cancel between a
// proposal's creation and its plan's sealing, say). A key that names no
// run is stored.
func (db *DB) refuseEnded(tx *bolt.Tx, kind, key string) error {
	if db.ended == nil || !slices.ContainsFunc(db.endKinds, func(p []byte) bool { return string(p[:len(p)-1]) == kind }) {
		return nil
	}
	_, r, err := getRun(tx, key)
	if err != nil || !db.ended(r.Status) {
		return nil
	}
	return fmt.Errorf("run %s already ended (%s), and a %s blob is kept only while its run lasts: %w", key, r.Status, kind, ErrConflict)
}

// GetBlob returns a copy of the blob stored under (kind, key), or an error
// wrapping ErrNotFound.
func (db *DB) GetBlob(kind, key string) ([]byte, error) {
	k, err := blobKey(kind, key)
	if err != nil {
		return nil, fmt.Errorf("reading blob: %w", err)
	}
	var out []byte
	err = db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get(k)
		if v == nil {
			return ErrNotFound
		}
		out = bytes.Clone(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s blob %s: %w", kind, key, err)
	}
	return out, nil
}

// DeleteBlob removes the blob under (kind, key). Deleting a missing blob is
// not an error.
func (db *DB) DeleteBlob(kind, key string) error {
	k, err := blobKey(kind, key)
	if err != nil {
		return fmt.Errorf("deleting blob: %w", err)
	}
	if err := db.bolt.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketBlobs).Delete(k) }); err != nil {
		return fmt.Errorf("deleting %s blob %s: %w", kind, key, err)
	}
	return nil
}

// ListBlobs returns the keys of all blobs of kind, in byte order.
func (db *DB) ListBlobs(kind string) ([]string, error) {
	if kind == "" || bytes.IndexByte([]byte(kind), 0) >= 0 {
		return nil, fmt.Errorf("listing blobs: kind %q must be non-empty without NUL bytes", kind)
	}
	prefix := append([]byte(kind), 0)
	var keys []string
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketBlobs).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, string(k[len(prefix):]))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s blobs: %w", kind, err)
	}
	return keys, nil
}

// PutWorkdirState records what is known of a working directory's state,
// keyed by its absolute path, replacing the earlier record.
func (db *DB) PutWorkdirState(dir string, st WorkdirState) error {
	if dir == "" {
		return errors.New("recording working directory state: no directory given")
	}
	v, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encoding working directory state: %w", err)
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketDirs).Put([]byte(dir), v) })
	if err != nil {
		return fmt.Errorf("recording working directory state of %s: %w", dir, err)
	}
	return nil
}

// GetWorkdirState returns the last record PutWorkdirState made for dir, or
// an error wrapping ErrNotFound when there is none.
func (db *DB) GetWorkdirState(dir string) (WorkdirState, error) {
	var st WorkdirState
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketDirs).Get([]byte(dir))
		if v == nil {
			return fmt.Errorf("working directory %s: %w", dir, ErrNotFound)
		}
		return json.Unmarshal(v, &st)
	})
	return st, err
}

// Ping reports whether the database is open and readable.
func (db *DB) Ping() error {
	if err := db.bolt.View(func(*bolt.Tx) error { return nil }); err != nil {
		return fmt.Errorf("reading the database: %w", err)
	}
	return nil
}

// Writable reports whether a write transaction commits (the file is open,
// not read-only, and the disk takes a write).
func (db *DB) Writable() error {
	if err := db.bolt.Update(func(*bolt.Tx) error { return nil }); err != nil {
		return fmt.Errorf("writing the database: %w", err)
	}
	return nil
}
