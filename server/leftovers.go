package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// runMarkerVar is set in the environment of every process a run starts (and
// so inherited by what those start: provisioners, providers). Its value
// names the data directory and the run, so that a restart can find what a
// killed server left running.
const runMarkerVar = "SWITCHTENDER_RUN"

func (s *Server) runMarker(id string) string {
	return s.config().Server.DataDir + "#" + id
}

// stopLeftovers stops the processes a previous server left running for the
// given runs: the parent-death signal interrupts the tool itself when the
// server dies, but what the tool started (a provisioner's command) can
// outlive it. They get SIGINT, then SIGKILL after grace. It reads /proc, so
// it does nothing where there is none. It returns how many it found.
func (s *Server) stopLeftovers(ids []string, grace time.Duration) int {
	markers := make([]string, 0, len(ids))
	for _, id := range ids {
		markers = append(markers, s.runMarker(id))
	}
	return stopMarked(markers, grace)
}

// stopMarked stops every process whose environment holds runMarkerVar with
// one of markers: SIGINT, then SIGKILL after grace. It returns how many it
// found (none where there is no /proc).
func stopMarked(markers []string, grace time.Duration) int {
	if len(markers) == 0 {
		return 0
	}
	want := map[string]bool{}
	for _, m := range markers {
		want[runMarkerVar+"="+m] = true
	}
	find := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue
			}
			for _, kv := range bytes.Split(env, []byte{0}) {
				if want[string(kv)] {
					pids = append(pids, pid)
					break
				}
			}
		}
		return pids
	}
	found := find()
	for _, pid := range found {
		_ = syscall.Kill(pid, syscall.SIGINT)
	}
	deadline := time.Now().Add(grace)
	for left := found; len(left) > 0; left = find() {
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return len(found)
}
