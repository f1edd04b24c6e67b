package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDataDir takes DATA_DIR/worker.lock for this worker process for as
// long as the returned file stays open: two workers sharing a data
// directory would take each other's runs for an earlier life's leftovers
// (cleanLeftovers) and wipe them. A data directory in use is an error that
// names the process holding it.
func lockDataDir(dataDir string) (*os.File, error) {
	path := filepath.Join(dataDir, "worker.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the worker's lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := strings.TrimSpace(string(b[:n]))
		if holder == "" {
			holder = "another process"
		} else {
			holder = "process " + holder
		}
		return nil, fmt.Errorf("data_dir %s is in use by another worker (%s holds %s); give each worker a data_dir of its own", dataDir, holder, path)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}
