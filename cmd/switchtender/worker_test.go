package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// The real binaries: `switchtender serve` and a `switchtender worker`
// process with a key from ssh-keygen's format, a delivery identity from
// `keygen pool` and the control node's host key in known_hosts. The worker
// runs a dry run in its own checkout; SIGTERM drains it: the apply it has
// finishes and succeeds, then the process exits 0.
func TestWorkerProcessRunsAndDrains(t *testing.T) {
	dir := t.TempDir()
	identity := filepath.Join(dir, "pool.key")
	out, err := osexec.Command(binary, "keygen", "pool", "--out", identity).Output()
	if err != nil {
		t.Fatalf("keygen pool: %v", err)
	}
	recipient := strings.TrimSpace(string(out))
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := gossh.NewSignerFromKey(priv)
	blk, _ := gossh.MarshalPrivateKey(priv, "")
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	n := newNodeWith(t, nodeOptions{extra: fmt.Sprintf(`
queue "eu" { pool = "eu" }
pool "eu" {
  delivery_key  = %q
  workers       = [%q]
  lease_timeout = "3s"
}
template "rnet" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`, recipient, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey()))))})
	cmd, exited := startWorkerProcess(t, n, dir, keyPath, identity)
	id := n.launch("rnet", "--dry-run")
	if v := n.waitStatus(id, "succeeded", "failed"); v.Status != "succeeded" || !strings.Contains(v.Message, "worker p1") {
		t.Fatalf("the dry run on the worker process: %s %s", v.Status, v.Message)
	}
	slow := n.launch("rslow")
	n.waitLog(slow, "started-slow")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if v := n.waitStatus(slow, "succeeded", "failed"); v.Status != "succeeded" {
		t.Errorf("the run the worker had when it drained: %s %s", v.Status, v.Message)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the drained worker exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the drained worker did not exit")
	}
}

// startWorkerProcess writes known_hosts and worker.hcl into dir, with a
// copy of the test project whose slow apply sleeps 3 s, and starts
// `switchtender worker`.
func startWorkerProcess(t *testing.T, n *node, dir, keyPath, identity string) (*osexec.Cmd, chan error) {
	t.Helper()
	var host gossh.PublicKey
	c, err := gossh.Dial("tcp", n.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(n.keys["alice"])},
		HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error { host = k; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, []byte(knownhosts.Line([]string{knownhosts.Normalize(n.addr)}, host)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(dir, "checkout")
	if err := os.CopyFS(checkout, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	slow := "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" { command = \"echo started-slow; sleep 3\" }\n}\n"
	if err := os.WriteFile(filepath.Join(checkout, "infra/slow/main.tf"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("worker {\n  name = \"p1\"\n  control = %q\n  pool = \"eu\"\n  key = %q\n  delivery_identity = %q\n  data_dir = %q\n  known_hosts = %q\n}\nproject \"infra\" { path = %q }\n",
		n.addr, keyPath, identity, filepath.Join(dir, "wdata"), kh, checkout)
	cfgPath := filepath.Join(dir, "worker.hcl")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "worker.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(binary, "worker", "--config", cfgPath)
	cmd.Env, cmd.Stdout, cmd.Stderr = serverEnv, logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "worker.log"))
			t.Logf("worker output:\n%s", b)
		}
	})
	return cmd, exited
}

// A worker file that does not parse is refused with file:line.
func TestWorkerConfigRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.hcl")
	if err := os.WriteFile(path, []byte("worker {\n  control = \"nohost\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := osexec.Command(binary, "worker", "--config", path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "worker.hcl:2") || !strings.Contains(string(out), "is not HOST:PORT") {
		t.Errorf("worker with a bad file: %v\n%s", err, out)
	}
}
