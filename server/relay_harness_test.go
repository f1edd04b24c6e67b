package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/switchtender/switchtender/server/internal/testkit"

	"github.com/switchtender/switchtender/store"

	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/relay"
)

// relayKey is a worker's SSH key (testkit.Key).
type relayKey = testkit.Key

func newRelayKey(t *testing.T) relayKey { return testkit.NewKey(t) }

// newDeliveryKey writes a pool delivery identity into dir, as keygen pool
// does, and returns its path and recipient.
func newDeliveryKey(t *testing.T, dir string) (string, string) { return testkit.NewDeliveryKey(t, dir) }

// knownHosts writes an OpenSSH known_hosts file holding the control node's
// host key, as ssh-keyscan would.
func knownHosts(t *testing.T, h *harness, dir string) string {
	return testkit.KnownHosts(t, h.addr, "alice", h.keys["alice"], dir)
}

// relayWorkerCfg makes a worker's directory (its key, its own copy of the
// test project, a data directory) and its configuration.
func relayWorkerCfg(t *testing.T, h *harness, name, pool string, key relayKey, identity string) *config.Worker {
	t.Helper()
	dir := t.TempDir()
	return testkit.WorkerDir(t, h.addr, knownHosts(t, h, dir), "testdata/project", name, pool, key, identity)
}

// startWorker runs a worker until the test ends; the returned channel gets
// RunWorker's error, and drain drains it.
func startWorker(t *testing.T, cfg *config.Worker) (errs chan error, drain func()) {
	t.Helper()
	return testkit.StartWorker(t, cfg, testEnviron)
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, what, d, cond)
}

const holdRnetForBob = testkit.HoldRnetForBob

// recvWithin reads one message, or reports none within d (the reader is
// then left behind: read no more from w).
func recvWithin(w *rawWorker, d time.Duration) (relay.Msg, bool) { return testkit.RecvWithin(w, d) }

const poolDataTemplate = testkit.PoolDataTemplate

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

// readWorker reads every message of a raw worker into a channel.
func readWorker(w *rawWorker) chan relay.Msg { return testkit.ReadWorker(w) }

// nextMsg waits up to d for a message of type typ, or reports none.
func nextMsg(ch chan relay.Msg, typ string, d time.Duration) (relay.Msg, bool) {
	return testkit.NextMsg(ch, typ, d)
}

// handOverPlan hands plan over with js as its `show -json`.
func handOverPlan(raw *rawWorker, run string, token uint64, plan, js []byte) {
	testkit.HandOverPlan(raw, run, token, plan, js)
}

// leaseRun has raw (worker w2 of pool eu) take the launched run and
// returns its job.
func leaseRun(t *testing.T, h *harness, raw *rawWorker, ch chan relay.Msg, args ...string) (string, relay.Msg) {
	t.Helper()
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", append([]string{"launch"}, append(args, "--json")...)...))
	offer, ok := nextMsg(ch, relay.MsgOffer, 15*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("offer %+v (got one: %v) for run %s", offer, ok, id)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
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

func rawEvidence(findings ...store.Finding) *store.Scan { return testkit.RawEvidence(findings...) }

// takeRun launches args on pool eu and has raw take the run; it
// returns the run and its job.
func takeRun(t *testing.T, h *harness, raw *rawWorker, args ...string) (string, relay.Msg) {
	t.Helper()
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", append(append([]string{"launch"}, args...), "--json")...))
	if m := raw.Recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v, want run %s", m, id)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.Recv()
	if job.Type != relay.MsgJob || job.Run != id {
		t.Fatalf("job %+v", job)
	}
	return id, job
}

const slowCredentialTemplate = testkit.SlowCredentialTemplate

func writeBlobModule(t *testing.T, checkout string, size int) {
	t.Helper()
	testkit.WriteBlobModule(t, checkout, size)
}

const (
	relayCloudKey = "relay-cloud-key-8c1f2e"
	relayPassword = "relay-db-password-77aa"
)

// relayHarness is a control node with pool "eu" (a delivery key, workers
// w1 and w2), pool "bare" (no delivery key, worker b1) and templates on
// both; the workers' keys and the delivery identity are returned.
func relayHarness(t *testing.T, extra string) (*harness, map[string]relayKey, string) {
	t.Helper()
	keys := map[string]relayKey{"w1": newRelayKey(t), "w2": newRelayKey(t), "b1": newRelayKey(t)}
	identity, recipient := newDeliveryKey(t, t.TempDir())
	h := newHarness(t, fmt.Sprintf(`
queue "eu" { pool = "eu" }
queue "bare" { pool = "bare" }
pool "eu" {
  delivery_key  = %q
  workers       = [%q, %q]
  lease_timeout = "2s"
}
pool "bare" {
  workers = [%q]
}
credential "cloud" { env = { CLOUD_KEY = %q } }
template "rnet" {
  project = "infra"
  command = "infra/network"
  queue   = "eu"
  survey "region" { type = "string" }
}
template "rsecret" {
  project     = "infra"
  command     = "infra/secret"
  queue       = "eu"
  credentials = ["cloud"]
  survey "db_password" { type = "string" }
}
template "bnet" {
  project = "infra"
  command = "infra/network"
  queue   = "bare"
  survey "region" { type = "string" }
}
`, recipient, keys["w1"].Line, keys["w2"].Line, keys["b1"].Line, relayCloudKey)+extra)
	return h, keys, identity
}

// rawWorker speaks the relay protocol by hand over a real SSH connection,
// to behave as no real worker would (testkit.RawWorker).
type rawWorker = testkit.RawWorker

func dialRaw(t *testing.T, h *harness, key relayKey, hello relay.Msg) (*rawWorker, relay.Msg) {
	t.Helper()
	return testkit.DialRaw(t, h.addr, key, hello)
}

// runIDOf reads the ID of the run launch --json printed.
func runIDOf(t *testing.T, out string) string {
	t.Helper()
	var v runView
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
		t.Fatalf("launch --json printed %q: %v", out, err)
	}
	return v.ID
}
