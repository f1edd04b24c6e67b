package scenario

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/worker"
	"github.com/switchtender/switchtender/store"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// A worker that takes a run and never heartbeats loses its lease: the run
// fails within the lease timeout with the reason and the state lock
// warning, and is not re-run; the late result it sends with its old
// fencing token is rejected, audited, and changes nothing. The pool goes
// on: a real worker then takes the next run.
func TestRelayLostLeaseRejectsLateResult(t *testing.T) {
	h, keys, identity := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello answered with %+v", welcome)
	}
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	out := h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=x1", "--json")
	id := runIDOf(t, out)
	offer := raw.Recv()
	if offer.Type != relay.MsgOffer || offer.Run != id {
		t.Fatalf("offer %+v, want run %s", offer, id)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.Recv()
	if job.Type != relay.MsgJob || job.Token == 0 || len(job.Payload) == 0 || job.Clear {
		t.Fatalf("job %+v", job)
	}
	if strings.Contains(string(job.Payload), "x1\"") {
		t.Errorf("the payload is not sealed")
	}
	started := time.Now()
	raw.Send(relay.Msg{Type: relay.MsgStep, Run: id, Token: job.Token, Step: "plan", Exit: 0})
	h.waitStatus(id, store.StatusFailed)
	r, _ := h.db().GetRun(id)
	if took := time.Since(started); took > 6*time.Second {
		t.Errorf("the lost lease took %s to fail the run (timeout 2s)", took)
	}
	for _, want := range []string{"Worker w2 of pool eu stopped heartbeating during plan", "a state lock may be left", "Nothing was re-run"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message %q lacks %q", r.Message, want)
		}
	}
	rej := raw.Recv()
	if rej.Type != relay.MsgReject || rej.Run != id {
		t.Errorf("the worker was not told its lease ended: %+v", rej)
	}
	raw.Send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "late line\n"})
	raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: "succeeded", Exit: 0, Message: "done"})
	raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token + 1, Status: "succeeded", Exit: 0, Message: "forged"})
	for range 3 {
		if m := raw.Recv(); m.Type != relay.MsgReject || !strings.Contains(m.Message, "rejected and changed nothing") {
			t.Errorf("a late message was answered with %+v", m)
		}
	}
	r2, _ := h.db().GetRun(id)
	if r2.Status != r.Status || r2.Message != r.Message {
		t.Errorf("a late result changed the run: %s %q", r2.Status, r2.Message)
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "late line") {
		t.Errorf("a late log line reached the log:\n%s", log)
	}
	if audit := h.mustSSH("alice", "audit", "--run", id); !strings.Contains(audit, "worker lost") || !strings.Contains(audit, "result rejected") {
		t.Errorf("audit:\n%s", audit)
	}
	// The pool goes on, and the lost run is not offered again.
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	v := h.launchWait("alice", "rnet", "--dry-run", "--var", "region=x2")
	if v.Status != store.StatusSucceeded || v.PlannedBy != "w1" {
		t.Errorf("the next run: %s by %q: %s", v.Status, v.PlannedBy, v.Message)
	}
	if r3, _ := h.db().GetRun(id); r3.Status != store.StatusFailed {
		t.Errorf("the lost run was re-run: %s", r3.Status)
	}
}

// A key no pool lists is refused at the handshake; a listed key that
// claims another pool, or a name already connected, is refused with a
// sentence and audited.
func TestRelayRefusesUnknownKeyAndOtherPool(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	stranger := relayWorkerCfg(t, h, "x9", "eu", newRelayKey(t), identity)
	err := worker.RunWorker(t.Context(), stranger, worker.WorkerOptions{Environ: testkit.Environ()})
	if err == nil || !strings.Contains(err.Error(), "did not accept this worker's key") {
		t.Errorf("unknown key: %v", err)
	}
	wrongPool := relayWorkerCfg(t, h, "b1", "eu", keys["b1"], identity)
	err = worker.RunWorker(t.Context(), wrongPool, worker.WorkerOptions{Environ: testkit.Environ()})
	if err == nil || !strings.Contains(err.Error(), `listed by pool bare, not pool "eu"`) {
		t.Errorf("a worker of pool bare claiming pool eu: %v", err)
	}
	spoofed := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	other := newRelayKey(t)
	line := knownhosts.Line([]string{knownhosts.Normalize(h.addr)}, other.Signer.PublicKey()) + "\n"
	if err := os.WriteFile(spoofed.KnownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	err = worker.RunWorker(t.Context(), spoofed, worker.WorkerOptions{Environ: testkit.Environ()})
	if err == nil || !strings.Contains(err.Error(), "offered a host key that") {
		t.Errorf("a control node whose host key known_hosts does not hold: %v", err)
	}
	err = worker.RunWorker(t.Context(), spoofed, worker.WorkerOptions{Environ: []string{"PATH=" + t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "a worker without tofu on its PATH takes no runs") {
		t.Errorf("a worker without tofu: %v", err)
	}
	startWorker(t, relayWorkerCfg(t, h, "b1", "bare", keys["b1"], ""))
	waitFor(t, "b1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "b1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=p", "--json"))
	time.Sleep(time.Second)
	if show := h.mustSSH("alice", "show", id); !strings.Contains(show, "no worker of pool eu is connected") {
		t.Errorf("a run of pool eu with only a worker of pool bare connected:\n%s", show)
	}
	if _, code := sshAsKey(t, h, keys["w1"], "runs"); code == 0 {
		t.Errorf("a worker key ran a user command")
	}
	if audit := h.mustSSH("alice", "audit"); !strings.Contains(audit, "worker refused") {
		t.Errorf("the refusal is not audited:\n%s", audit)
	}
}

// sshAsKey runs one command with key and returns stderr and the exit code.
func sshAsKey(t *testing.T, h *harness, key relayKey, cmd string) (string, int) {
	t.Helper()
	client, err := gossh.Dial("tcp", h.addr, &gossh.ClientConfig{User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(key.Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	sess.Stderr = &stderr
	err = sess.Run(cmd)
	if ee, ok := err.(*gossh.ExitError); ok {
		return stderr.String(), ee.ExitStatus()
	}
	return stderr.String(), 0
}

// A worker that reconnects under the same name while it holds a lease is
// told to try again while its old connection is alive, offered nothing
// until that lease ends, and never the run it lost: the next run it gets
// is the one queued meanwhile.
func TestRelayReconnectGetsNoRunTwice(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	old, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	old.Send(relay.Msg{Type: relay.MsgPoll})
	first := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=a1", "--json"))
	old.Recv()
	old.Send(relay.Msg{Type: relay.MsgTake, Run: first})
	old.Recv() // the job; it never heartbeats
	// While the old connection was heard from within the lease timeout, a
	// second connection of the name is told to try again; once it has been
	// silent that long, the new one takes the name over.
	_, busy := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	if busy.Type != relay.MsgRefused || !busy.Busy {
		t.Fatalf("a second connection while the first is alive: %+v", busy)
	}
	time.Sleep(h.srv.Config().Pools["eu"].LeaseTimeout + 500*time.Millisecond) // eu has no LeaseTimeouts override
	again, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("the reconnect after the old connection fell silent: %+v", welcome)
	}
	again.Send(relay.Msg{Type: relay.MsgPoll})
	second := runIDOf(t, h.mustSSH("alice", "launch", "rsecret", "--dry-run", "--var", "db_password=a2345678", "--json"))
	var offered []string
	for len(offered) == 0 {
		switch m := again.Recv(); m.Type {
		case relay.MsgOffer:
			offered = append(offered, m.Run)
		case relay.MsgReject:
			if m.Run != first {
				t.Errorf("reject of %+v", m)
			}
		}
	}
	if offered[0] != second {
		t.Errorf("the reconnected worker was offered run %s, want %s", offered[0], second)
	}
	if r, _ := h.db().GetRun(first); r.Status != store.StatusFailed {
		t.Errorf("the lost run is %s, want failed before anything else is offered", r.Status)
	}
}

// Containment on the worker: a working directory that is a symlink out of
// the worker's checkout is refused before any process starts.
func TestRelayWorkerRefusesEscape(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	outside := t.TempDir()
	if err := os.WriteFile(outside+"/main.tf", []byte(`output "x" { value = "outside" }`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd := w1.Projects["infra"].Path + "/infra/network"
	if err := os.RemoveAll(wd); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, wd); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w1)
	v := h.launchWait("alice", "rnet", "--dry-run", "--var", "region=x")
	if v.Status != store.StatusFailed || !strings.Contains(v.Message, "refusing working directory") || len(v.Steps) != 0 {
		t.Errorf("a symlink out of the worker's checkout: %s steps=%v: %s", v.Status, stepNames(v), v.Message)
	}
}

// Hostile input on the relay. Two workers racing for one run: one offer; the
// other's take is rejected. A log line, a result, a heartbeat for a run
// another worker holds (with its token), or for a run never leased, or from
// another pool's worker, are rejected and change nothing; an unknown type is
// rejected; garbage ends only the sender's session.
func TestHostileRelayInputChangesNothing(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	a, _ := dialRaw(t, h, keys["w1"], relay.Msg{Name: "w1", Pool: "eu"})
	b, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	bare, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare"})
	a.Send(relay.Msg{Type: relay.MsgPoll})
	time.Sleep(100 * time.Millisecond)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=race", "--json"))
	offer := a.Recv()
	if offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	b.Send(relay.Msg{Type: relay.MsgPoll})
	b.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	if m := b.Recv(); m.Type != relay.MsgReject {
		t.Errorf("a take of a run offered to another worker: %+v", m)
	}
	a.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := a.Recv()
	if job.Type != relay.MsgJob {
		t.Fatalf("job %+v", job)
	}
	for _, w := range []*rawWorker{b, bare} {
		w.Send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "INJECTED\n"})
		w.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: "succeeded"})
		w.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token})
		w.Send(relay.Msg{Type: relay.MsgResult, Run: "nosuchrun", Token: 1, Status: "succeeded"})
		w.Send(relay.Msg{Type: "bogus", Run: id})
		for range 5 {
			if m := w.Recv(); m.Type != relay.MsgReject {
				t.Errorf("hostile message answered with %+v", m)
			}
		}
	}
	a.Send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token + 1, Data: "WRONGTOKEN\n"})
	if m := a.Recv(); m.Type != relay.MsgReject {
		t.Errorf("a wrong token: %+v", m)
	}
	// garbage ends only b's session
	if _, err := b.In.Write([]byte("{not json\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Conn.Recv(); err == nil {
		t.Errorf("the session survived garbage")
	}
	a.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: "succeeded", Message: "ok"})
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed)
	r, _ := h.db().GetRun(id)
	if r.Status != store.StatusSucceeded {
		t.Errorf("the holder's result: %s %s", r.Status, r.Message)
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "INJECTED") || strings.Contains(log, "WRONGTOKEN") {
		t.Errorf("a hostile log line reached the log:\n%s", log)
	}
}

// A user's key asking for the relay gets no relay; a worker whose known_hosts
// holds another host key for the control node is refused.
func TestAUserKeyGetsNoRelayAndAnUnknownHostKeyIsRefused(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	client, err := gossh.Dial("tcp", h.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(h.keys["alice"])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, _ := client.NewSession()
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.Start(relay.Command); err != nil {
		t.Fatal(err)
	}
	c := relay.NewConn(out, in)
	_ = c.Send(relay.Msg{Type: relay.MsgHello, Name: "alice", Pool: "eu"})
	if m, err := c.Recv(); err == nil && m.Type == relay.MsgWelcome {
		t.Errorf("a user's key was welcomed as a worker")
	}
	cfg := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	other := newRelayKey(t)
	line := knownhosts.Line([]string{knownhosts.Normalize(h.addr)}, other.Signer.PublicKey()) + "\n"
	if err := os.WriteFile(cfg.KnownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	err = worker.RunWorker(t.Context(), cfg, worker.WorkerOptions{Environ: testkit.Environ()})
	if err == nil || !strings.Contains(err.Error(), "host key") {
		t.Errorf("a control node with another host key: %v", err)
	}
}

// Promise: the relay's input is hostile; huge messages are bounded. Once,
// each plan_start line of about 100 bytes made the control node reserve the
// sizes the worker merely declared, about 275 MiB a line.
func TestADeclaredPlanSizeAllocatesNothingUpFront(t *testing.T) {
	h, keys, _ := relayHarness(t, holdRnetForBob)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=mem", "--json"))
	if offer, ok := recvWithin(raw, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job, ok := recvWithin(raw, 10*time.Second)
	if !ok || !job.Gated {
		t.Fatalf("job %+v", job)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 4 {
		raw.Send(relay.Msg{Type: relay.MsgPlanStart, Run: id, Token: job.Token, Size: relay.PlanLimit, JSONSize: relay.JSONLimit})
	}
	raw.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token})
	time.Sleep(500 * time.Millisecond)
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Errorf("four plan_start lines (no plan bytes) made the control node allocate %d MiB", d>>20)
	}
}

// Promise (brief: a worker cannot flood the control node's decisions; what
// crosses the relay is bounded). Once, a worker's scan evidence was taken
// whole, so 120,000 findings made a 22 MB run message, a 44 MB audit trail
// and a 45 MB show.
func TestAWorkersFindingsAreBounded(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := takeRun(t, h, raw, "rs-modvar", "--dry-run")
	const n = 120000
	fs := make([]store.Finding, n)
	for i := range fs {
		fs[i] = store.Finding{Address: "data.external.x" + strconv.Itoa(i), File: "infra/scan/modvar/main.tf", Line: i + 1,
			Reason: "runs the program it names " + strings.Repeat("x", 100)}
	}
	started := time.Now()
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: rawEvidence(fs...)})
	m := raw.Recv()
	took := time.Since(started)
	h.waitStatus(id, store.StatusAwaitingApproval, store.StatusFailed, store.StatusRefused)
	r, _ := h.db().GetRun(id)
	t0 := time.Now()
	list := h.mustSSH("alice", "runs")
	audit := h.mustSSH("bob", "audit", "--run", id)
	show := h.mustSSH("bob", "show", id)
	t.Logf("answered %s in %s; run %s, message %d bytes, findings %d; runs %d bytes, audit %d bytes, show %d bytes in %s",
		m.Type, took, r.Status, len(r.Message), len(r.Scan.Findings), len(list), len(audit), len(show), time.Since(t0))
	if len(r.Message) > 1<<20 || len(audit) > 1<<20 || len(show) > 1<<20 {
		t.Errorf("one worker message put %d findings (%d bytes of message, %d of audit, %d of show) into the run's record", len(r.Scan.Findings), len(r.Message), len(audit), len(show))
	}
}

// Promise (relay: the control node keeps the decisions; "refused" is the
// status of a run a gate or scan refused, lifecycle.go). Once, a worker's
// "refused" with a message of its choosing was recorded as the run's refusal
// for a job that had no step a worker may refuse, as if the gate had decided
// it.
func TestAWorkerCannotRefuseAnUnscannedJob(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := takeRun(t, h, raw, "rnet", "--dry-run", "--var", "region=rf")
	if job.ScanWhy != "" || job.Ref != "" {
		t.Fatalf("the job is scanned: %+v", job)
	}
	raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: store.StatusRefused, Exit: -1,
		Message: "The rules refuse this apply: rule prod-freeze. Nothing was applied."})
	h.waitStatus(id, store.StatusRefused, store.StatusFailed)
	if r, _ := h.db().GetRun(id); r.Status == store.StatusRefused {
		t.Fatalf("a worker's refusal of a job that has no refusal on a worker was recorded as the run's: %s: %s", r.Status, r.Message)
	}
}

// A worker's "interrupted" (the report of a worker stopped outright) ends the
// run and changes nothing else. For a gated apply's plan phase it proposes
// nothing; for a scanned job before its scan it keeps no scan; the run is
// never re-run and its lease is gone, so the worker's later plan or success
// is rejected.
func TestAWorkersInterruptedEndsTheRunAndChangesNothingElse(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	for _, args := range [][]string{{"rs-modvar", "--dry-run"}, {"rpr", "--dry-run", "--ref", "main"}} {
		id, job := takeRun(t, h, raw, args...)
		if job.ScanWhy == "" {
			t.Fatalf("%v: the job is not scanned", args)
		}
		raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: store.StatusInterrupted, Exit: -1, Message: "stopped"})
		h.waitStatus(id, store.StatusInterrupted, store.StatusFailed)
		raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: store.StatusSucceeded, Exit: 0})
		if m := raw.Recv(); m.Type != relay.MsgReject {
			t.Fatalf("%v: a success after interrupted was answered %+v", args, m)
		}
		r, _ := h.db().GetRun(id)
		if r.Scan != nil || len(r.Approvals) != 0 || r.Proposal != nil || r.Status != store.StatusInterrupted {
			t.Fatalf("%v: interrupted left %s, scan %+v, proposal %+v", args, r.Status, r.Scan, r.Proposal)
		}
	}
}

// Promise (the fix, relay_end.go result: "anything else counts as failed" for
// a result a job cannot have). Once, a worker could end a dry run "stale" and
// another, which nobody cancelled, "cancelled" with a sentence of its own,
// and both were recorded as reported.
func TestAResultAJobCannotHaveCountsAsFailed(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	for _, st := range []store.Status{store.StatusStale, store.StatusCancelled} {
		id, job := takeRun(t, h, raw, "rnet", "--dry-run", "--var", "region="+string(st))
		raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: st, Exit: 1,
			Message: "Cancelled by bob during plan on worker w2."})
		h.waitStatus(id, store.StatusStale, store.StatusCancelled, store.StatusFailed)
		r, _ := h.db().GetRun(id)
		if r.Status == st {
			t.Errorf("a worker's %q for a dry run nobody cancelled and that holds no saved plan was recorded as the run's: %s: %s (cancel requested by %q)",
				st, r.Status, r.Message, r.CancelRequested)
		}
	}
}
