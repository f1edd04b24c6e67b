package main

// The fault suite: the real binary is SIGKILLed at every phase a run goes
// through, and after a restart each test checks that nothing acknowledged was
// lost (the run, its log so far, a held proposal, an approval), that nothing
// re-runs by itself, that no plaintext plan is left under the data directory,
// that no process of the run is left and that the working directory's state
// lock is free.
//
// To stop the server at an exact phase, a stand-in `tofu` is put first on
// the server's PATH: when its arguments are the chosen step it touches a
// marker file and sleeps (the test waits for the marker, then kills the
// server); otherwise it executes the real OpenTofu. A run gets only a
// filtered environment, so everything the stand-in needs is written into
// the script. Every call is recorded with the run's SWITCHTENDER_RUN marker,
// so a test can count what each run executed.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// faultExtra is the configuration the fault tests add: a template no rule
// covers, so its apply is the one-step `apply -auto-approve`.
const faultExtra = `template "open" {
  project = "infra"
  command = "infra/data"
}
template "open-slow" {
  project = "infra"
  command = "infra/slow"
}
`

// The steps a stand-in can stop at.
const (
	atInit      = "init"
	atPlan      = "plan"
	atPlanSaved = "plan, once the plan file is saved"
	atShow      = "show"
	atStatePull = "state pull"
	atApplyAuto = "apply -auto-approve"
	atApplyPlan = "apply PLANFILE"
)

// standIn is a stand-in tofu for one test.
type standIn struct {
	t      *testing.T
	dir    string // holds the script, named tofu: put first on PATH
	marker string // touched when the stand-in stops
	calls  string // one line per call: run marker, working directory, arguments
}

// newStandIn writes a stand-in tofu that stops (touches its marker and
// sleeps) the first time it is called for step at in a working directory
// ending in onlyIn ("" for any), and otherwise executes the real tofu.
func newStandIn(t *testing.T, at, onlyIn string) *standIn {
	t.Helper()
	real, err := tofubin.Ensure(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &standIn{t: t, dir: dir, marker: filepath.Join(dir, "stopped"), calls: filepath.Join(dir, "calls")}
	var cond string
	switch at {
	case atInit, atPlan, atShow:
		cond = fmt.Sprintf(`[ "$1" = %s ]`, at)
	case atStatePull:
		cond = `[ "$1" = state ] && [ "$2" = pull ]`
	case atPlanSaved:
		cond = `[ "$1" = plan ] && after "$@"`
	case atApplyAuto:
		cond = `[ "$1" = apply ] && auto`
	case atApplyPlan:
		cond = `[ "$1" = apply ] && ! auto`
	default:
		t.Fatalf("no such step %q", at)
	}
	if onlyIn != "" {
		cond += fmt.Sprintf(` && case "$PWD" in *%s) true;; *) false;; esac`, shq("/"+onlyIn))
	}
	script := fmt.Sprintf(`#!/bin/sh
# A stand-in tofu written by a fault test.
printf '%%s\t%%s\t%%s\n' "$SWITCHTENDER_RUN" "$PWD" "$*" >> %[1]s
auto() {
	case " $ARGS " in *" -auto-approve "*) return 0;; esac
	return 1
}
# after runs the real tofu first, so the stand-in stops once it is done.
after() {
	%[4]s "$@"
}
ARGS="$*"
if [ ! -e %[2]s ] && %[3]s; then
	touch %[2]s
	sleep 600
	exit 1
fi
exec %[4]s "$@"
`, shq(s.calls), shq(s.marker), cond, shq(real))
	if err := os.WriteFile(filepath.Join(dir, "tofu"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waitStopped waits until the stand-in stopped at its step.
func (s *standIn) waitStopped(n *node) {
	s.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, err := os.Stat(s.marker); err == nil {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.calls)
			s.t.Fatalf("the stand-in never stopped; calls:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// callsOf lists the arguments of every tool call run id made.
func (s *standIn) callsOf(n *node, id string) []string {
	s.t.Helper()
	b, err := os.ReadFile(s.calls)
	if err != nil && !os.IsNotExist(err) {
		s.t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) == 3 && f[0] == n.runMarker(id) {
			out = append(out, f[2])
		}
	}
	return out
}

// count is how many of calls begin with prefix.
func count(calls []string, prefix string) int {
	c := 0
	for _, a := range calls {
		if strings.HasPrefix(a, prefix) {
			c++
		}
	}
	return c
}

// runMarker is the SWITCHTENDER_RUN value of run id's processes.
func (n *node) runMarker(id string) string { return n.data + "#" + id }

// runProcesses are the processes whose environment carries run id's
// marker.
func (n *node) runProcesses(id string) map[int]string {
	want := []byte("SWITCHTENDER_RUN=" + n.runMarker(id))
	found := map[int]string{}
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
			if bytes.Equal(kv, want) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				found[pid] = strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
				break
			}
		}
	}
	return found
}

// log is run id's stored log.
func (n *node) log(id string) string {
	n.t.Helper()
	return n.mustSSH("bob", "log", id)
}

// launch launches template with args and returns the run's ID.
func (n *node) launch(template string, args ...string) string {
	n.t.Helper()
	out := n.mustSSH("alice", append([]string{"launch", template}, args...)...)
	_, rest, ok := strings.Cut(out, "run ")
	if !ok {
		n.t.Fatalf("launch %s: no run in %q", template, out)
	}
	id, _, _ := strings.Cut(rest, ":")
	if _, err := strconv.Atoi(id); err != nil {
		n.t.Fatalf("launch %s: no run in %q", template, out)
	}
	return id
}

// approvals are the approvals `show --json` lists for run id.
func (n *node) approvals(id string) []struct{ By, Digest, Decision, Stage string } {
	n.t.Helper()
	var v struct {
		Approvals []struct{ By, Digest, Decision, Stage string }
	}
	out := n.mustSSH("bob", "show", id, "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		n.t.Fatalf("show %s --json: %v\n%s", id, err, out)
	}
	return v.Approvals
}

// lockFree runs the real tofu in working directory dir with the state lock
// and no wait for it: it fails when anything still holds the lock.
func (n *node) lockFree(dir string) {
	n.t.Helper()
	real, err := tofubin.Ensure(context.Background(), os.Stderr)
	if err != nil {
		n.t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"}
	if v := os.Getenv("TF_PLUGIN_CACHE_DIR"); v != "" {
		env = append(env, "TF_PLUGIN_CACHE_DIR="+v)
	}
	for _, args := range [][]string{
		{"init", "-input=false", "-no-color"},
		{"plan", "-lock=true", "-lock-timeout=0s", "-input=false", "-no-color"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := osexec.CommandContext(ctx, real, args...)
		cmd.Dir, cmd.Env = filepath.Join(n.project, dir), env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			n.t.Errorf("tofu %s in %s after the restart: %v (the state lock is not free?)\n%s", args[0], dir, err, out)
			return
		}
	}
}

// killed is what a test read of a run before the server was killed.
type killed struct {
	id    string
	log   string
	calls int
}

// before records what was acknowledged of run id, then checks the run is
// executing and a process of it is running (so the checks after the
// restart are exercised).
func before(n *node, s *standIn, id string) killed {
	n.t.Helper()
	if v := n.show(id); v.Status != "running" {
		n.t.Fatalf("run %s is %s (%s) when the stand-in stopped, want running", id, v.Status, v.Message)
	}
	k := killed{id: id, log: n.log(id), calls: len(s.callsOf(n, id))}
	n.t.Logf("run %s before the kill: calls %q; processes %v", id, s.callsOf(n, id), n.runProcesses(id))
	return k
}

// afterInterrupted checks a run that executed at the kill, after the
// restart: it is interrupted, its log kept, nothing of it runs, and it
// never executes again.
func afterInterrupted(n *node, s *standIn, k killed) {
	n.t.Helper()
	v := n.show(k.id)
	if v.Status != "interrupted" || !strings.Contains(v.Message, "not re-run") {
		n.t.Errorf("run %s after the restart: %s %q, want interrupted saying it was not re-run", k.id, v.Status, v.Message)
	}
	if got := n.log(k.id); !strings.HasPrefix(got, k.log) {
		n.t.Errorf("run %s's log lost what was stored before the kill:\nbefore:\n%s\nafter:\n%s", k.id, k.log, got)
	}
	if left := n.runProcesses(k.id); len(left) > 0 {
		n.t.Errorf("processes of run %s left after the restart: %v", k.id, left)
	}
	time.Sleep(2 * time.Second)
	if calls := s.callsOf(n, k.id); len(calls) != k.calls {
		n.t.Errorf("run %s executed again after the restart: %q", k.id, calls[k.calls:])
	}
	if v := n.show(k.id); v.Status != "interrupted" {
		n.t.Errorf("run %s changed after the restart: %s %q", k.id, v.Status, v.Message)
	}
}

// noPlans checks that no plaintext plan is under the data directory.
func noPlans(n *node, when string) {
	n.t.Helper()
	if files := n.planFiles(); len(files) > 0 {
		n.t.Errorf("plaintext plan under the data directory %s: %v", when, files)
	}
}

// killDuring starts a node whose stand-in stops at step in working
// directory onlyIn, launches template, waits for the stop and kills the
// server; it returns the node, the stand-in and what was acknowledged.
func killDuring(t *testing.T, at, onlyIn, template string, args ...string) (*node, *standIn, killed) {
	s := newStandIn(t, at, onlyIn)
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	id := n.launch(template, args...)
	s.waitStopped(n)
	k := before(n, s, id)
	if len(n.runProcesses(id)) == 0 {
		t.Errorf("no process of run %s before the kill; the check after the restart is not exercised", id)
	}
	n.kill()
	n.t.Logf("run %s after the kill: processes %v", id, n.runProcesses(id))
	return n, s, k
}

// restartAndCheck restarts a killed node and checks the interrupted run
// k in working directory dir.
func restartAndCheck(n *node, s *standIn, k killed, dir string) {
	n.t.Helper()
	n.start()
	noPlans(n, "after the restart")
	afterInterrupted(n, s, k)
	n.lockFree(dir)
	if got := n.stateInstances(dir, "server"); got != 0 {
		n.t.Errorf("the state holds %d servers after an interrupted run, want 0", got)
	}
}

func TestFaultKilledDuringInit(t *testing.T) {
	n, s, k := killDuring(t, atInit, "", "data", "--var", "instances=3")
	restartAndCheck(n, s, k, "infra/data")
}

func TestFaultKilledDuringPlan(t *testing.T) {
	n, s, k := killDuring(t, atPlan, "", "data", "--var", "instances=3")
	restartAndCheck(n, s, k, "infra/data")
}

func TestFaultKilledDuringShowJSON(t *testing.T) {
	n, s, k := killDuring(t, atShow, "", "data", "--var", "instances=3")
	if len(n.planFiles()) == 0 {
		t.Errorf("no plaintext plan while show -json read it; the wipe at restart is not exercised")
	}
	restartAndCheck(n, s, k, "infra/data")
	if v := n.show(k.id); v.Proposal != nil && v.Proposal.Digest != "" {
		t.Errorf("run %s has a proposal after it was interrupted before its plan was sealed: %+v", k.id, v.Proposal)
	}
}

func TestFaultKilledDuringUngatedApply(t *testing.T) {
	n, s, k := killDuring(t, atApplyAuto, "", "open")
	restartAndCheck(n, s, k, "infra/data")
}

func TestFaultKilledDuringGatedApply(t *testing.T) {
	s := newStandIn(t, atApplyPlan, "")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	digest := n.show("1").Proposal.Digest
	n.mustSSH("bob", "approve", "1", "--digest", digest)
	s.waitStopped(n)
	k := before(n, s, "1")
	if len(n.planFiles()) == 0 {
		t.Errorf("no plaintext plan while tofu applied it; the wipe at restart is not exercised")
	}
	if len(n.runProcesses("1")) == 0 {
		t.Errorf("no process of run 1 before the kill; the check after the restart is not exercised")
	}
	n.kill()
	restartAndCheck(n, s, k, "infra/data")
	if a := n.approvals("1"); len(a) == 0 || a[len(a)-1].Digest != digest || a[len(a)-1].By != "bob" {
		t.Errorf("the approval of run 1 after the restart: %+v, want bob's of %s", a, digest)
	}
	if got := count(s.callsOf(n, "1"), "apply "); got != 1 {
		t.Errorf("run 1 called apply %d times, want once", got)
	}
}

// A run held for approval when the server is killed: the proposal is kept
// with its digest, nothing of the run executes until it is approved, and
// then it applies once.
func TestFaultKilledWhileHeld(t *testing.T) {
	s := newStandIn(t, "init", "nowhere")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	held := n.show("1")
	log := n.log("1")
	calls := len(s.callsOf(n, "1"))
	n.kill()
	noPlans(n, "after a kill while held")
	n.start()
	noPlans(n, "after the restart")
	again := n.show("1")
	if again.Status != "awaiting_approval" || again.Proposal == nil || again.Proposal.Digest != held.Proposal.Digest {
		t.Fatalf("after the restart run 1 is %s %q with proposal %+v, want the held plan %s", again.Status, again.Message, again.Proposal, held.Proposal.Digest)
	}
	if got := n.log("1"); !strings.HasPrefix(got, log) {
		t.Errorf("run 1's log lost what was stored before the kill:\nbefore:\n%s\nafter:\n%s", log, got)
	}
	if left := n.runProcesses("1"); len(left) > 0 {
		t.Errorf("processes of run 1 left after the restart: %v", left)
	}
	time.Sleep(2 * time.Second)
	if c := s.callsOf(n, "1"); len(c) != calls {
		t.Errorf("the held run 1 executed after the restart: %q", c[calls:])
	}
	n.lockFree("infra/data")
	if got := n.stateInstances("infra/data", "server"); got != 0 {
		t.Fatalf("the held plan was applied before its approval: %d servers", got)
	}
	n.mustSSH("bob", "approve", "1", "--digest", held.Proposal.Digest)
	if v := n.waitStatus("1", "succeeded", "failed", "stale", "interrupted"); v.Status != "succeeded" {
		t.Fatalf("the approved plan after a restart: %s: %s\n%s", v.Status, v.Message, n.log("1"))
	}
	if got := n.stateInstances("infra/data", "server"); got != 3 {
		t.Errorf("the state holds %d servers after the approved plan, want 3", got)
	}
	if got := count(s.callsOf(n, "1"), "apply "); got != 1 {
		t.Errorf("run 1 called apply %d times, want once", got)
	}
	noPlans(n, "after the apply")
}

// A queued run when the server is killed: with max_parallel = 1 and a first
// run stopped in the same working directory, the second waits; after the
// restart the first is interrupted and the second runs exactly once.
func TestFaultKilledWhileQueued(t *testing.T) {
	s := newStandIn(t, atInit, "")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra, maxParallel: 1})
	first := n.launch("open")
	s.waitStopped(n)
	second := n.launch("open")
	time.Sleep(500 * time.Millisecond)
	if v := n.show(second); v.Status != "queued" {
		t.Fatalf("run %s is %s (%s) behind a running run, want queued", second, v.Status, v.Message)
	}
	k := before(n, s, first)
	n.kill()
	n.start()
	noPlans(n, "after the restart")
	afterInterrupted(n, s, k)
	v := n.waitStatus(second, "succeeded", "failed", "interrupted", "cancelled")
	if v.Status != "succeeded" {
		t.Fatalf("the queued run %s after the restart: %s %q\n%s", second, v.Status, v.Message, n.log(second))
	}
	time.Sleep(2 * time.Second)
	calls := s.callsOf(n, second)
	if count(calls, "init ") != 1 || count(calls, "apply ") != 1 {
		t.Errorf("the queued run %s executed %q, want one init and one apply", second, calls)
	}
	if got := n.stateInstances("infra/data", "server"); got != 2 {
		t.Errorf("the state holds %d servers after the queued apply, want 2", got)
	}
	if left := n.runProcesses(second); len(left) > 0 {
		t.Errorf("processes of run %s left after it ended: %v", second, left)
	}
	n.lockFree("infra/data")
}

// A server killed right after it acknowledged an approval, before the apply
// started (max_parallel = 1 and another run holds the only slot): after the
// restart the approval is kept and the plan is applied exactly once.
func TestFaultKilledAfterApproval(t *testing.T) {
	s := newStandIn(t, atInit, "infra/slow")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra, maxParallel: 1})
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	digest := n.show("1").Proposal.Digest
	blocker := n.launch("slow")
	s.waitStopped(n)
	k := before(n, s, blocker)
	n.mustSSH("bob", "approve", "1", "--digest", digest)
	if v := n.show("1"); v.Status != "queued" {
		t.Fatalf("run 1 after its approval with the only slot taken: %s %q, want queued", v.Status, v.Message)
	}
	calls := len(s.callsOf(n, "1"))
	n.kill()
	noPlans(n, "after a kill with the approved run queued")
	n.start()
	afterInterrupted(n, s, k)
	if a := n.approvals("1"); len(a) == 0 || a[len(a)-1].Digest != digest || a[len(a)-1].By != "bob" {
		t.Errorf("the approval of run 1 after the restart: %+v, want bob's of %s", a, digest)
	}
	v := n.waitStatus("1", "succeeded", "failed", "stale", "interrupted")
	if v.Status != "succeeded" {
		t.Fatalf("the approved run 1 after the restart: %s %q\n%s", v.Status, v.Message, n.log("1"))
	}
	time.Sleep(2 * time.Second)
	after := s.callsOf(n, "1")[calls:]
	if count(after, "apply ") != 1 {
		t.Errorf("run 1 after the restart executed %q, want one apply", after)
	}
	if got := n.stateInstances("infra/data", "server"); got != 3 {
		t.Errorf("the state holds %d servers after the approved plan, want 3", got)
	}
	noPlans(n, "after the apply")
	n.lockFree("infra/data")
	n.lockFree("infra/slow")
}

// Killed during the plan step once tofu saved the plan file: the plaintext
// plan the kill left is wiped at the restart.
func TestFaultKilledDuringPlanSaved(t *testing.T) {
	n, s, k := killDuring(t, atPlanSaved, "", "data", "--var", "instances=3")
	if len(n.planFiles()) == 0 {
		t.Errorf("no plaintext plan after the plan step saved it; the wipe at restart is not exercised")
	}
	restartAndCheck(n, s, k, "infra/data")
}

// waitLog waits until run id's log contains text.
func (n *node) waitLog(id, text string) {
	n.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(n.log(id), text) {
		if time.Now().After(deadline) {
			n.t.Fatalf("run %s's log never said %q:\n%s", id, text, n.log(id))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockHeld checks that the real tofu cannot take the state lock of working
// directory dir now (so lockFree after a restart means something).
func (n *node) lockHeld(dir string) {
	n.t.Helper()
	real, err := tofubin.Ensure(context.Background(), os.Stderr)
	if err != nil {
		n.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, real, "plan", "-lock=true", "-lock-timeout=0s", "-input=false", "-no-color")
	cmd.Dir = filepath.Join(n.project, dir)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "lock") {
		n.t.Errorf("the state lock of %s was not held while tofu applied (%v); the lock check after the restart is not exercised\n%s", dir, err, out)
	}
}

// The real tofu applying (its provisioner running, the state locked) when
// the server is killed, for the one-step apply no rule covers and for an
// approved plan: after the restart the lock is free and nothing is left.
func TestFaultKilledDuringUngatedApplyReal(t *testing.T) {
	s := newStandIn(t, atInit, "nowhere") // passes every call to the real tofu, counting them
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	id := n.launch("open-slow")
	n.waitLog(id, "started-slow")
	n.lockHeld("infra/slow")
	k := before(n, s, id)
	n.kill()
	t.Logf("run %s after the kill: processes %v", id, n.runProcesses(id))
	n.start()
	noPlans(n, "after the restart")
	afterInterrupted(n, s, k)
	n.lockFree("infra/slow")
}

func TestFaultKilledDuringGatedApplyReal(t *testing.T) {
	s := newStandIn(t, atInit, "nowhere")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	out := n.mustSSH("alice", "launch", "slow", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	digest := n.show("1").Proposal.Digest
	n.mustSSH("bob", "approve", "1", "--digest", digest)
	n.waitLog("1", "started-slow")
	n.lockHeld("infra/slow")
	k := before(n, s, "1")
	if len(n.planFiles()) == 0 {
		t.Errorf("no plaintext plan while tofu applied it; the wipe at restart is not exercised")
	}
	n.kill()
	t.Logf("run 1 after the kill: processes %v", n.runProcesses("1"))
	n.start()
	noPlans(n, "after the restart")
	afterInterrupted(n, s, k)
	n.lockFree("infra/slow")
	if a := n.approvals("1"); len(a) == 0 || a[len(a)-1].Digest != digest || a[len(a)-1].By != "bob" {
		t.Errorf("the approval of run 1 after the restart: %+v, want bob's of %s", a, digest)
	}
	if got := count(s.callsOf(n, "1"), "apply "); got != 1 {
		t.Errorf("run 1 called apply %d times, want once", got)
	}
}

// Killed in the verify step of an approved run (its state read), after the
// approval was acknowledged and the proposal marked used, before the apply:
// the run is interrupted, its approval kept, and the plan never applied.
func TestFaultKilledDuringVerify(t *testing.T) {
	s := newStandIn(t, atStatePull, "")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	digest := n.show("1").Proposal.Digest
	n.mustSSH("bob", "approve", "1", "--digest", digest)
	s.waitStopped(n)
	k := before(n, s, "1")
	n.kill()
	restartAndCheck(n, s, k, "infra/data")
	if a := n.approvals("1"); len(a) == 0 || a[len(a)-1].Digest != digest || a[len(a)-1].By != "bob" {
		t.Errorf("the approval of run 1 after the restart: %+v, want bob's of %s", a, digest)
	}
	if got := count(s.callsOf(n, "1"), "apply "); got != 0 {
		t.Errorf("run 1 called apply %d times, want never", got)
	}
	// A second approval of the same digest is refused: the run ended.
	if _, _, code := n.ssh("bob", "approve", "1", "--digest", digest); code == 0 {
		t.Errorf("approving the interrupted run 1 again was accepted")
	}
}

// Killed at once after an approval was acknowledged, with nothing holding
// the run back: wherever the kill lands, the approval is kept and the plan
// is applied at most once, and exactly once when the run did not start
// executing before the kill.
func TestFaultKilledRightAfterApproval(t *testing.T) {
	s := newStandIn(t, atInit, "nowhere")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	digest := n.show("1").Proposal.Digest
	n.mustSSH("bob", "approve", "1", "--digest", digest)
	n.kill()
	callsAtKill := s.callsOf(n, "1")
	n.start()
	if a := n.approvals("1"); len(a) == 0 || a[len(a)-1].Digest != digest || a[len(a)-1].By != "bob" {
		t.Errorf("the approval of run 1 after the restart: %+v, want bob's of %s", a, digest)
	}
	v := n.waitStatus("1", "succeeded", "failed", "stale", "interrupted")
	time.Sleep(2 * time.Second)
	calls := s.callsOf(n, "1")
	t.Logf("run 1 %s; calls at the kill %q, in all %q", v.Status, callsAtKill, calls)
	applies := count(calls, "apply ")
	switch v.Status {
	case "succeeded":
		if applies != 1 {
			t.Errorf("run 1 called apply %d times, want once", applies)
		}
		if got := n.stateInstances("infra/data", "server"); got != 3 {
			t.Errorf("the state holds %d servers after the approved plan, want 3", got)
		}
	case "interrupted":
		if applies > 1 {
			t.Errorf("run 1 called apply %d times, want at most once", applies)
		}
		if len(calls) != len(callsAtKill) {
			t.Errorf("the interrupted run 1 executed after the restart: %q", calls[len(callsAtKill):])
		}
	default:
		t.Errorf("run 1 after the restart: %s %q", v.Status, v.Message)
	}
	noPlans(n, "after the restart")
	if left := n.runProcesses("1"); len(left) > 0 {
		t.Errorf("processes of run 1 left after the restart: %v", left)
	}
	n.lockFree("infra/data")
}

// processesIn are the processes whose working directory is dir or inside it.
func processesIn(dir string) map[int]string {
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if len(cmdline) == 0 {
			continue // a zombie
		}
		found[pid] = strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
	}
	return found
}

// Killed while a run's command-source credential runs (the preparation
// before its first tool step): after the restart the run is interrupted and
// the credential command, started for the run, is not left running.
func TestFaultKilledDuringCredentialCommand(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "stopped")
	script := filepath.Join(dir, "credential")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
# A credential command written by a fault test: it stops the first time.
cd %[1]s || exit 1
if [ ! -e %[2]s ]; then
	touch %[2]s
	sleep 600
fi
echo token-from-the-command
`, shq(dir), shq(marker))), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for pid := range processesIn(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	s := newStandIn(t, atInit, "nowhere")
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra + fmt.Sprintf(`credential "slow" {
  command = [%q]
  env_var = "SLOW_TOKEN"
}
template "credentialed" {
  project     = "infra"
  command     = "infra/data"
  credentials = ["slow"]
}
`, script)})
	id := n.launch("credentialed")
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the credential command never ran: run %s is %s", id, n.show(id).Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	k := before(n, s, id)
	if len(processesIn(dir)) == 0 {
		t.Fatalf("the credential command is not running before the kill")
	}
	n.kill()
	n.start()
	noPlans(n, "after the restart")
	afterInterrupted(n, s, k)
	if left := processesIn(dir); len(left) > 0 {
		t.Errorf("the credential command of run %s is still running after the restart: %v", id, left)
	}
	n.lockFree("infra/data")
}

// tofuByHand runs the real tofu in working directory dir of the node's
// project with the server's environment, as a person would outside
// Switchtender.
func (n *node) tofuByHand(dir string, args ...string) {
	n.t.Helper()
	real, err := tofubin.Ensure(context.Background(), os.Stderr)
	if err != nil {
		n.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, real, args...)
	cmd.Dir = filepath.Join(n.project, dir)
	cmd.Env = append(append([]string{}, serverEnv...), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Fatalf("tofu %v by hand in %s: %v\n%s", args, dir, err, out)
	}
}

// checkView is the part of `show CHECK --json` the drift fault tests read.
type checkView struct {
	Status    string
	Message   string
	Reconcile string
	Check     *struct {
		Drifted      bool
		Kept         bool
		SupersededBy string `json:"superseded_by"`
		ReconciledBy string `json:"reconciled_by"`
		Plan         *struct{ Digest string }
	}
}

func (n *node) showCheck(id string) checkView {
	n.t.Helper()
	var v checkView
	out := n.mustSSH("bob", "show", id, "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		n.t.Fatalf("show %s --json: %v\n%s", id, err, out)
	}
	return v
}

// noPlanAnywhere checks no file under the data directory holds a plan
// file in clear, whatever its name: a saved plan is a zip archive with a
// "tfplan" entry, whose name is in clear in the archive's directory.
func noPlanAnywhere(n *node, when string) {
	n.t.Helper()
	noPlans(n, when)
	filepath.WalkDir(n.data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("PK\x01\x02")) && bytes.Contains(b, []byte("tfplan")) {
			n.t.Errorf("a plan in clear under the data directory %s: %s", when, p)
		}
		return nil
	})
}

// driftedNode applies template open (2 servers) through the server, then
// 4 by hand, so a check of infra/data finds drift.
func driftedNode(t *testing.T, s *standIn) *node {
	n := newNodeWith(t, nodeOptions{pathFirst: s.dir, extra: faultExtra})
	if out := n.mustSSH("alice", "launch", "open", "--wait"); !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("the apply:\n%s", out)
	}
	n.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-no-color", "-var", "instances=4")
	if got := n.stateInstances("infra/data", "server"); got != 4 {
		t.Fatalf("the apply by hand left %d servers", got)
	}
	return n
}

// keptCheck launches a check of open, waits for it, and returns its kept
// plan's digest.
func keptCheck(n *node, id string) string {
	n.t.Helper()
	out := n.mustSSH("alice", "launch", "open", "--check", "--wait")
	if !strings.Contains(out, "run "+id+": succeeded") {
		n.t.Fatalf("check %s:\n%s", id, out)
	}
	v := n.showCheck(id)
	if v.Check == nil || !v.Check.Kept || v.Check.Plan == nil || v.Check.Plan.Digest == "" {
		n.t.Fatalf("check %s kept no plan: %+v", id, v.Check)
	}
	return v.Check.Plan.Digest
}

// reconcileApplies proposes the reconcile of check and approves it: it
// applies exactly digest once, as an `apply PLANFILE`, and the state
// returns to 2 servers.
func reconcileApplies(n *node, s *standIn, check, want, digest string) {
	n.t.Helper()
	out := n.mustSSH("alice", "reconcile", check)
	if !strings.Contains(out, "run "+want+": awaiting_approval") {
		n.t.Fatalf("reconcile %s:\n%s", check, out)
	}
	if p := n.show(want).Proposal; p == nil || p.Digest != digest {
		n.t.Fatalf("the reconcile's proposal %+v, want the check's digest %s", p, digest)
	}
	n.mustSSH("bob", "approve", want, "--digest", digest)
	if v := n.waitStatus(want, "succeeded", "failed", "stale", "interrupted"); v.Status != "succeeded" {
		n.t.Fatalf("the reconcile: %s %q\n%s", v.Status, v.Message, n.log(want))
	}
	if a := n.approvals(want); len(a) == 0 || a[len(a)-1].Digest != digest {
		n.t.Errorf("the reconcile's approval %+v, want digest %s", a, digest)
	}
	calls := s.callsOf(n, want)
	if count(calls, "apply ") != 1 || count(calls, "apply -auto-approve") != 0 {
		n.t.Errorf("the reconcile executed %q, want one apply of the plan file", calls)
	}
	if got := n.stateInstances("infra/data", "server"); got != 2 {
		n.t.Errorf("the state holds %d servers after the reconcile, want 2", got)
	}
	noPlanAnywhere(n, "after the reconcile")
	n.lockFree("infra/data")
}

// SIGKILL while a drift plan is kept: after the restart no plan is in clear
// under the data directory, nothing re-ran, the check still says a reconcile
// can be proposed, and the reconcile applies exactly the digest the check
// showed.
func TestFaultKilledWhileDriftPlanKept(t *testing.T) {
	s := newStandIn(t, atInit, "nowhere") // passes every call through, counting them
	n := driftedNode(t, s)
	digest := keptCheck(n, "2")
	calls := map[string]int{"1": len(s.callsOf(n, "1")), "2": len(s.callsOf(n, "2"))}
	noPlanAnywhere(n, "while the plan is kept")
	n.kill()
	noPlanAnywhere(n, "after the kill")
	n.start()
	noPlanAnywhere(n, "after the restart")
	time.Sleep(2 * time.Second)
	for id, c := range calls {
		if got := s.callsOf(n, id); len(got) != c {
			t.Errorf("run %s executed again after the restart: %q", id, got[c:])
		}
	}
	v := n.showCheck("2")
	if v.Status != "succeeded" || v.Check == nil || !v.Check.Kept || v.Check.Plan.Digest != digest || !strings.Contains(v.Reconcile, "can be proposed") {
		t.Fatalf("check 2 after the restart: %s %q %+v %q", v.Status, v.Message, v.Check, v.Reconcile)
	}
	if got := n.stateInstances("infra/data", "server"); got != 4 {
		t.Fatalf("the state changed across the restart: %d servers", got)
	}
	reconcileApplies(n, s, "2", "3", digest)
	if v := n.showCheck("2"); v.Check == nil || v.Check.ReconciledBy != "3" || v.Check.Kept {
		t.Errorf("check 2 after its reconcile: %+v", v.Check)
	}
}

// SIGKILL during a later check's plan step, while an earlier check keeps
// its plan: the later check is interrupted and keeps nothing, and the
// earlier check's plan is untouched (a check drops earlier plans only when
// it completes), so its reconcile still applies its digest.
func TestFaultKilledDuringDriftCheckPlan(t *testing.T) {
	s := newStandIn(t, atPlan, "")
	if err := os.WriteFile(s.marker, nil, 0o600); err != nil { // disarmed until removed
		t.Fatal(err)
	}
	n := driftedNode(t, s)
	digest := keptCheck(n, "2")
	if err := os.Remove(s.marker); err != nil { // armed: the next plan stops
		t.Fatal(err)
	}
	id := n.launch("open", "--check")
	if id != "3" {
		t.Fatalf("the second check is run %s", id)
	}
	s.waitStopped(n)
	k := before(n, s, id)
	if len(n.runProcesses(id)) == 0 {
		t.Errorf("no process of run %s before the kill", id)
	}
	n.kill()
	n.start()
	noPlanAnywhere(n, "after the restart")
	afterInterrupted(n, s, k)
	n.lockFree("infra/data")
	later := n.showCheck(id)
	if later.Check != nil && (later.Check.Kept || later.Check.Plan != nil) {
		t.Errorf("the interrupted check %s kept something: %+v", id, later.Check)
	}
	if !strings.Contains(later.Reconcile, "cannot be proposed") {
		t.Errorf("the interrupted check's reconcile note: %q", later.Reconcile)
	}
	if _, errOut, code := n.ssh("alice", "reconcile", id); code == 0 || !strings.Contains(errOut, "kept no plan") {
		t.Errorf("reconcile of the interrupted check %s: %d %q", id, code, errOut)
	}
	v := n.showCheck("2")
	if v.Check == nil || !v.Check.Kept || v.Check.SupersededBy != "" || v.Check.Plan.Digest != digest {
		t.Fatalf("the earlier check 2 after an interrupted later check: %+v %q", v.Check, v.Reconcile)
	}
	reconcileApplies(n, s, "2", "4", digest)
}
