package testkit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/worker"
)

// WorkerDir makes a worker's directory (its key, its own copy of the
// project at projectSrc, a data directory) and returns the worker's
// configuration for control node addr; knownHosts is its known_hosts file.
func WorkerDir(t testing.TB, addr, knownHosts, projectSrc, name, pool string, key Key, identity string) *config.Worker {
	t.Helper()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyPath, key.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(dir, "checkout")
	if err := os.CopyFS(checkout, os.DirFS(projectSrc)); err != nil {
		t.Fatal(err)
	}
	return &config.Worker{Name: name, Control: addr, Pool: pool, Key: keyPath, DeliveryIdentity: identity,
		DataDir: filepath.Join(dir, "data"), KnownHosts: knownHosts,
		Projects: map[string]*config.Project{"infra": {Name: "infra", Path: checkout}}}
}

// StartWorker runs a relay worker on cfg with environ until the test ends
// (it fails t when the worker does not stop within 30 s then); the
// returned channel gets RunWorker's error, and drain drains the worker.
func StartWorker(t testing.TB, cfg *config.Worker, environ []string) (errs chan error, drain func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dr := make(chan struct{})
	errs = make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		errs <- worker.RunWorker(ctx, cfg, worker.WorkerOptions{Environ: environ, Version: "test", Drain: dr})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the worker did not stop")
		}
	})
	var once bool
	return errs, func() {
		if !once {
			once = true
			close(dr)
		}
	}
}
