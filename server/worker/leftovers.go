package worker

import (
	"os"
	"path/filepath"
	"time"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/runstep"
)

// A worker marks every process a run starts, as the control node does
// (runstep.RunMarkerVar, its value DATA_DIR#RUN), and keeps each run's private
// directory only while the run lasts. A worker that died (SIGKILL, a
// crash, a lost machine) leaves both behind: what a provisioner started
// may outlive the parent-death signal that stopped the tool, and a saved
// plan or a scan's copy may be left in clear. At its next start the worker
// stops the marked processes and wipes the directories before it dials.

// workerRunGrace is how long a leftover process has between SIGINT and
// SIGKILL.
const workerRunGrace = 10 * time.Second

// Marker is the run marker (runstep.RunMarkerVar's value) every process
// of run id has on a worker whose data directory is dataDir.
func Marker(dataDir, id string) string { return runstep.Marker(dataDir, id) }

// cleanLeftovers stops what runs of an earlier life of this worker left
// running and removes their private directories, a plan file in them
// wiped first. It returns the runs it found.
func (w *worker) cleanLeftovers() []string {
	runs := filepath.Join(w.cfg.DataDir, "runs")
	entries, err := os.ReadDir(runs)
	if err != nil {
		return nil
	}
	var ids, markers []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
			markers = append(markers, Marker(w.cfg.DataDir, e.Name()))
		}
	}
	stopped := runstep.StopMarked(markers, workerRunGrace)
	for _, id := range ids {
		dir := filepath.Join(runs, id)
		_ = seal.Wipe(filepath.Join(dir, runstep.PlanFileName))
		if err := os.RemoveAll(dir); err != nil {
			w.log.Warn("removing a leftover run directory", "dir", dir, "err", err)
		}
	}
	if len(ids) > 0 {
		w.log.Warn("an earlier life of this worker left runs behind; their processes were stopped and their private directories wiped",
			"runs", ids, "processes", stopped)
	}
	return ids
}
