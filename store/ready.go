package store

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Ready reports, without writing, whether the store can take writes: it
// answers a read transaction, it was not opened read-only, and the
// filesystem holding it is not mounted read-only and has room left. It is
// what /readyz asks, so an unauthenticated probe costs no write and no
// fsync (an empty commit per probe, as Writable makes, slowed runs).
func (db *DB) Ready() error {
	if err := db.Ping(); err != nil {
		return err
	}
	if db.bolt.IsReadOnly() {
		return errors.New("the database is open read-only")
	}
	var fs unix.Statfs_t
	dir := filepath.Dir(db.bolt.Path())
	if err := unix.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("reading the filesystem of %s: %w", dir, err)
	}
	if fs.Flags&unix.ST_RDONLY != 0 {
		return fmt.Errorf("the filesystem of %s is mounted read-only", dir)
	}
	if fs.Bavail == 0 {
		return fmt.Errorf("the filesystem of %s has no space left", dir)
	}
	return nil
}

// PagesWritten is how many pages the store has written since it was
// opened (bbolt's count); a read-only operation leaves it unchanged.
func (db *DB) PagesWritten() int64 {
	st := db.bolt.Stats()
	return st.TxStats.GetWrite()
}
