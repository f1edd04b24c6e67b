package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os"

	"github.com/switchtender/switchtender/store"

	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/relay"
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

// holdRnetForBob holds every apply of rnet for bob, so a gated plan is saved.
const holdRnetForBob = `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`

// recvWithin reads one message, or reports none within d (the reader is
// then left behind: read no more from w).
func recvWithin(w *rawWorker, d time.Duration) (relay.Msg, bool) {
	ch := make(chan relay.Msg, 1)
	go func() {
		m, err := w.c.Recv()
		if err == nil {
			ch <- m
		}
	}()
	select {
	case m := <-ch:
		return m, true
	case <-time.After(d):
		return relay.Msg{}, false
	}
}

// poolDataTemplate is a pool template over infra/data (terraform_data
// resources: a plan that destroys is made without any provider) and a rule
// that holds any plan destroying something for bob: a plan-content rule,
// so an apply of rdata is gated (its plan is handed over and measured).
const poolDataTemplate = `
template "rdata" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "no-destroys-rdata" {
  templates   = ["rdata"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`

// runTofuByHand runs OpenTofu by hand in dir of the harness's project and
// returns its standard output.
func runTofuByHand(t *testing.T, h *harness, dir string, args ...string) []byte {
	t.Helper()
	bin, err := osexec.LookPath("tofu")
	for _, p := range filepath.SplitList(h.runPath()) {
		if c := filepath.Join(p, "tofu"); err != nil {
			if _, serr := os.Stat(c); serr == nil {
				bin, err = c, nil
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(bin, args...)
	cmd.Dir = filepath.Join(h.project, dir)
	cmd.Env = append(append([]string{}, testEnviron...), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tofu %v by hand: %v\n%s%s", args, err, out.Bytes(), errb.Bytes())
	}
	return out.Bytes()
}

// planDataByHand makes a real saved plan of infra/data by hand (vars as
// -var arguments) and returns it with its real `show -json`.
func planDataByHand(t *testing.T, h *harness, vars ...string) (plan, js []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.tfplan")
	args := []string{"plan", "-input=false", "-out=" + path}
	for _, v := range vars {
		args = append(args, "-var", v)
	}
	runTofuByHand(t, h, "infra/data", args...)
	js = bytes.TrimSpace(runTofuByHand(t, h, "infra/data", "show", "-json", path))
	if i := bytes.IndexByte(js, '{'); i > 0 {
		t.Logf("show -json began with %q", js[:i])
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan, js
}

// readWorker reads every message of a raw worker into a channel, so
// a test can wait for one with a timeout and never hang.
func readWorker(w *rawWorker) chan relay.Msg {
	ch := make(chan relay.Msg, 64)
	go func() {
		defer close(ch)
		for {
			m, err := w.c.Recv()
			if err != nil {
				return
			}
			ch <- m
		}
	}()
	return ch
}

// nextMsg waits up to d for a message of type typ (others are
// skipped), or reports none.
func nextMsg(ch chan relay.Msg, typ string, d time.Duration) (relay.Msg, bool) {
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return relay.Msg{}, false
			}
			if m.Type == typ {
				return m, true
			}
		case <-deadline:
			return relay.Msg{}, false
		}
	}
}

// handOverPlan hands plan over with js as its `show -json`.
func handOverPlan(raw *rawWorker, run string, token uint64, plan, js []byte) {
	raw.send(relay.Msg{Type: relay.MsgPlanning, Run: run, Token: token})
	raw.send(relay.Msg{Type: relay.MsgPlanStart, Run: run, Token: token, Size: int64(len(plan)), JSONSize: int64(len(js))})
	raw.send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "plan", Blob: plan})
	raw.send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "json", Blob: js})
	raw.send(relay.Msg{Type: relay.MsgPlanEnd, Run: run, Token: token})
}

// leaseRun has raw (worker w2 of pool eu) take the launched run and
// returns its job.
func leaseRun(t *testing.T, h *harness, raw *rawWorker, ch chan relay.Msg, args ...string) (string, relay.Msg) {
	t.Helper()
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", append([]string{"launch"}, append(args, "--json")...)...))
	offer, ok := nextMsg(ch, relay.MsgOffer, 15*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("offer %+v (got one: %v) for run %s", offer, ok, id)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job, ok := nextMsg(ch, relay.MsgJob, 15*time.Second)
	if !ok {
		t.Fatalf("no job for %s", id)
	}
	return id, job
}

// settlePlanPhase waits until the run leaves running in its plan phase.
func settlePlanPhase(h *harness, id string, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		r, _ := h.srv.db.GetRun(id)
		if r.Status != StatusRunning || r.Phase == phaseApply {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rawEvidence is a scan's evidence as a raw worker sends it.
func rawEvidence(findings ...store.Finding) *store.Scan {
	return &store.Scan{Digest: "sha256:" + strings.Repeat("1", 64), Modules: 1, Files: 1, Findings: findings}
}

// takeRun launches args on pool eu and has raw take the run; it
// returns the run and its job.
func takeRun(t *testing.T, h *harness, raw *rawWorker, args ...string) (string, relay.Msg) {
	t.Helper()
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", append(append([]string{"launch"}, args...), "--json")...))
	if m := raw.recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v, want run %s", m, id)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.recv()
	if job.Type != relay.MsgJob || job.Run != id {
		t.Fatalf("job %+v", job)
	}
	return id, job
}

// slowPoolTemplate is a template on pool eu applying infra/slow.
const slowPoolTemplate = `
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`

// writeSlowModule makes infra/slow in checkout a 30-second apply.
func writeSlowModule(t *testing.T, checkout string) {
	t.Helper()
	tf := "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" { command = \"echo started-slow; sleep 30\" }\n}\n"
	if err := os.WriteFile(filepath.Join(checkout, "infra/slow/main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// slowCredentialTemplate is a pool template whose credential comes from
// a command that takes 3 seconds (a vault login, say), longer than pool
// eu's 2-second lease timeout and well inside the 60 seconds a credential
// command may take.
const slowCredentialTemplate = `
credential "slow13e" {
  command = ["/bin/sh", "-c", "sleep 3; echo slow-token-13e"]
  env_var = "SLOW_TOKEN_13E"
}
template "rslowcred" {
  project     = "infra"
  command     = "infra/network"
  queue       = "eu"
  credentials = ["slow13e"]
  survey "region" { type = "string" }
}
`

// writeBlobModule writes infra/blob13f into checkout: a working directory
// whose saved plan holds about size bytes of incompressible input (the
// plan file is deflated: base64 text of random bytes shrinks back to about
// the bytes' size).
func writeBlobModule(t *testing.T, checkout string, size int) {
	t.Helper()
	b := make([]byte, size)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(checkout, "infra/blob13f"), map[string]string{
		"main.tf":  "resource \"terraform_data\" \"blob\" {\n  input = file(\"${path.module}/blob.txt\")\n}\n",
		"blob.txt": base64.StdEncoding.EncodeToString(b),
	})
}
