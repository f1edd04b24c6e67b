package server

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/worker"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// relayKey is a worker's SSH key: its signer, its authorized_keys line and
// its private key in OpenSSH PEM form.
type relayKey struct {
	signer gossh.Signer
	line   string
	pem    []byte
}

func newRelayKey(t *testing.T) relayKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return relayKey{signer: signer, line: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey()))), pem: pem.EncodeToMemory(blk)}
}

// newDeliveryKey writes a pool delivery identity into dir, as keygen pool
// does, and returns its path and recipient.
func newDeliveryKey(t *testing.T, dir string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, "pool.key")
	k, err := seal.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, k.Recipient()
}

// knownHosts writes an OpenSSH known_hosts file holding the control node's
// host key, as ssh-keyscan would.
func knownHosts(t *testing.T, h *harness, dir string) string {
	t.Helper()
	var host gossh.PublicKey
	c, err := gossh.Dial("tcp", h.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(h.keys["alice"])},
		HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error { host = k; return nil }, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	path := filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(h.addr)}, host) + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// relayWorkerCfg makes a worker's directory (its key, its own copy of the
// test project, a data directory) and its configuration.
func relayWorkerCfg(t *testing.T, h *harness, name, pool string, key relayKey, identity string) *config.Worker {
	t.Helper()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyPath, key.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(dir, "checkout")
	if err := os.CopyFS(checkout, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	return &config.Worker{Name: name, Control: h.addr, Pool: pool, Key: keyPath, DeliveryIdentity: identity,
		DataDir: filepath.Join(dir, "data"), KnownHosts: knownHosts(t, h, dir),
		Projects: map[string]*config.Project{"infra": {Name: "infra", Path: checkout}}}
}

// startWorker runs a worker until the test ends; the returned channel gets
// RunWorker's error, and drain drains it.
func startWorker(t *testing.T, cfg *config.Worker) (errs chan error, drain func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dr := make(chan struct{})
	errs = make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		errs <- worker.RunWorker(ctx, cfg, worker.WorkerOptions{Environ: testEnviron, Version: "test", Drain: dr})
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

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gitCommitAll makes dir a git repository with one commit of everything in
// it and returns the commit.
func gitCommitAll(t *testing.T, dir string) string {
	t.Helper()
	var out []byte
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "worker checkout"}, {"rev-parse", "HEAD"}} {
		b, err := osexec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		out = b
	}
	return strings.TrimSpace(string(out))
}
