package worker

// A worker's data_dir is its own: a run ID from the wire cannot escape it.

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// bareWorker is a worker that was never dialled: its runJob is driven
// directly, as a (compromised or buggy) control node's job message would
// drive it.
func bareWorker(t *testing.T) (*worker, string) {
	t.Helper()
	dir := t.TempDir()
	checkout := filepath.Join(dir, "checkout")
	if err := os.CopyFS(checkout, os.DirFS("../testdata/project")); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Worker{Name: "w1", Pool: "eu", DataDir: filepath.Join(dir, "data"),
		Projects: map[string]*config.Project{"infra": {Name: "infra", Path: checkout}}}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &worker{cfg: cfg, opts: WorkerOptions{Environ: os.Environ()}, log: slog.New(slog.DiscardHandler)}, dir
}

// A job's run ID is data from the wire, joined to data_dir/runs to make the
// run's private directory, which the worker creates and removes with
// os.RemoveAll when the run ends. Once, a run ID of "../../victim" (or "..")
// made the worker create, and then remove recursively, a directory outside
// its data_dir (or the data_dir itself).
func TestAJobsRunIDCannotEscapeTheDataDir(t *testing.T) {
	for _, tc := range []struct{ run, victim string }{
		{"../../victim", "victim"}, // a sibling of the data_dir
		{"..", "data"},             // the data_dir itself
	} {
		t.Run(tc.run, func(t *testing.T) {
			w, dir := bareWorker(t)
			victim := filepath.Join(dir, tc.victim)
			if err := os.MkdirAll(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			keep := filepath.Join(victim, "precious")
			if err := os.WriteFile(keep, []byte("not the worker's to remove"), 0o644); err != nil {
				t.Fatal(err)
			}
			var wire bytes.Buffer
			c := relay.NewConn(strings.NewReader(""), &wire)
			job := relay.Msg{Type: relay.MsgJob, Run: tc.run, Token: 1, Project: "infra", Command: "infra/data",
				Kind: string(store.KindPlan), Tool: "no-such-tool", Clear: true, Payload: []byte(`{}`)}
			res := w.runJob(context.Background(), c, job, nil)
			t.Logf("result: %s %s", res.result.Status, res.result.Message)
			if _, err := os.Stat(keep); err != nil {
				t.Fatalf("a job with run ID %q removed %s, outside data_dir/runs: %v", tc.run, victim, err)
			}
		})
	}
}
