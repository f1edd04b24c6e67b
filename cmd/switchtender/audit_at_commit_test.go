package main

// The real binary is SIGKILLed right after the store commit of each state
// change a person makes (launch, approve, reject, cancel, reconcile,
// rerun), through the server's SWITCHTENDER_KILL_AFTER_COMMIT hook: the
// process kills itself as soon as a transaction that wrote the named run
// commits, before it does anything else. The store is then read as the
// crash left it, and again after a restart: every state change it holds
// has its audit entry, and the chain verifies.

import (
	"bytes"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/store"
)

// armedNode is a node whose server kills itself after the commit of a run
// named in its arm file.
type armedNode struct {
	*node
	arm string
}

func newArmedNode(t *testing.T, opts nodeOptions) *armedNode {
	t.Helper()
	arm := filepath.Join(t.TempDir(), "kill-after-commit")
	opts.env = append(opts.env, "SWITCHTENDER_KILL_AFTER_COMMIT="+arm)
	opts.extra += faultExtra
	return &armedNode{node: newNodeWith(t, opts), arm: arm}
}

// killAtCommitOf arms the kill for run id, has user run the command args
// (its connection breaks with the server), checks the server died of
// SIGKILL, and disarms so that a restart is not killed too.
func (n *armedNode) killAtCommitOf(id, user string, args ...string) {
	n.t.Helper()
	if err := os.WriteFile(n.arm, []byte(id+"\n"), 0o600); err != nil {
		n.t.Fatal(err)
	}
	out, answer := n.sshUntilKilled(user, args...)
	var err error
	select {
	case err = <-n.exited:
	case <-time.After(30 * time.Second):
		n.t.Fatalf("the server was not killed at the commit of run %s; %v answered (%v): %s", id, args, answer, out)
	}
	n.cmd = nil
	var ee *osexec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		n.t.Fatalf("the server ended with %v, not SIGKILL, during %v", err, args)
	}
	if err := os.Remove(n.arm); err != nil {
		n.t.Fatal(err)
	}
}

// sshUntilKilled runs args as user over SSH and returns what was printed
// and how the command ended (an error: the connection broke as the
// server was killed).
func (n *armedNode) sshUntilKilled(user string, args ...string) (string, error) {
	n.t.Helper()
	client, err := gossh.Dial("tcp", n.addr, &gossh.ClientConfig{
		User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(n.keys[user])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
	})
	if err != nil {
		n.t.Fatalf("ssh %s: %v", user, err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		n.t.Fatalf("ssh session: %v", err)
	}
	defer sess.Close()
	var out bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &out
	var quoted []string
	for _, a := range args {
		quoted = append(quoted, shq(a))
	}
	err = sess.Run(strings.Join(quoted, " "))
	return out.String(), err
}

// stored reads the stopped node's store: its runs by ID, and its audit
// trail after checking that the chain verifies.
func (n *armedNode) stored(when string) (map[string]store.Run, []store.AuditEvent) {
	n.t.Helper()
	db, err := store.Open(filepath.Join(n.data, "switchtender.db"))
	if err != nil {
		n.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.VerifyAudit(); err != nil {
		n.t.Errorf("%s: the audit trail does not verify: %v", when, err)
	}
	list, err := db.ListRuns()
	if err != nil {
		n.t.Fatal(err)
	}
	runs := map[string]store.Run{}
	for _, r := range list {
		runs[r.ID] = r
	}
	events, err := db.AuditTrail(nil)
	if err != nil {
		n.t.Fatal(err)
	}
	return runs, events
}

// everyChangeAudited checks, in the stopped node's store, that each state
// change a run records has its audit entry: its launch (or reconcile),
// every approval and rejection by whom it names, a cancel asked while it
// ran, how it ended, and a check's reconcile. It returns the runs.
func (n *armedNode) everyChangeAudited(when string) map[string]store.Run {
	n.t.Helper()
	runs, events := n.stored(when)
	count := func(run, actor, action string) int {
		c := 0
		for _, e := range events {
			if e.RunID == run && e.Action == action && (actor == "" || e.Actor == actor) {
				c++
			}
		}
		return c
	}
	want := func(r store.Run, actor, action string, times int) {
		if got := count(r.ID, actor, action); got != times {
			n.t.Errorf("%s: run %s (%s, %s) has %d %q entries by %q, want %d; trail:\n%s", when, r.ID, r.Kind, r.Status, got, action, actor, times, trail(events))
		}
	}
	for _, r := range runs {
		first := "launch"
		if r.Kind == "reconcile" {
			first = "reconcile"
		}
		want(r, r.Requester, first, 1)
		decided := map[[2]string]int{}
		for _, a := range r.Approvals {
			if a.Decision == "approve" || a.Decision == "reject" {
				decided[[2]string{a.By, string(a.Decision)}]++
			}
		}
		for k, times := range decided {
			want(r, k[0], k[1], times)
		}
		if r.CancelRequested != "" {
			want(r, r.CancelRequested, "cancel", 1)
		}
		switch r.Status {
		case "succeeded", "failed", "stale", "cancelled":
			want(r, "", string(r.Status), 1)
		case "interrupted":
			want(r, "", "recover", 1)
		}
		if c := r.Check; c != nil && c.ReconciledBy != "" {
			want(r, "", "reconciled", 1)
		}
	}
	return runs
}

func trail(events []store.AuditEvent) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("  " + e.RunID + " " + e.Actor + " " + e.Action + ": " + e.Detail + "\n")
	}
	return b.String()
}

// restartQuiet restarts the node, waits until run id is in one of
// statuses, stops it hard and checks the store again.
func (n *armedNode) restartQuiet(id string, statuses ...string) map[string]store.Run {
	n.t.Helper()
	n.start()
	n.waitStatus(id, statuses...)
	n.kill()
	return n.everyChangeAudited("after the restart")
}

// heldApply launches the gated apply run 1 and waits until it is held.
func (n *armedNode) heldApply() string {
	n.t.Helper()
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		n.t.Fatalf("the apply was not held:\n%s", out)
	}
	return n.show("1").Proposal.Digest
}

// Killed right after the launch commits: the run it stored has its launch
// entry, and after the restart it runs and its end is audited too. Before,
// the entry was written after the run's commit, so a crash between the
// two left a run nobody was recorded as launching.
func TestKilledAtALaunchCommitLeavesItsAuditEntry(t *testing.T) {
	t.Parallel()
	n := newArmedNode(t, nodeOptions{})
	n.killAtCommitOf("1", "alice", "launch", "open")
	if runs := n.everyChangeAudited("after the kill"); runs["1"].Requester != "alice" {
		t.Fatalf("the launch was not stored before the kill: %+v", runs)
	}
	n.restartQuiet("1", "succeeded", "failed")
}

// Killed right after an approval commits: the released run has bob's
// approve entry (this is the break: the run was released and applied with
// no approve entry, and `audit verify` passed), and after the restart it
// applies once with every entry in place.
func TestKilledAtAnApprovalCommitLeavesItsAuditEntry(t *testing.T) {
	t.Parallel()
	n := newArmedNode(t, nodeOptions{})
	digest := n.heldApply()
	n.killAtCommitOf("1", "bob", "approve", "1", "--digest", digest)
	runs := n.everyChangeAudited("after the kill")
	if a := runs["1"].Approvals; len(a) != 1 || a[0].By != "bob" || runs["1"].Status != "queued" {
		t.Fatalf("the approval was not stored before the kill: %s %+v", runs["1"].Status, a)
	}
	n.restartQuiet("1", "succeeded", "failed", "stale")
}

// Killed right after a rejection commits, and then right after the rerun
// of the rejected run commits: each has its entry.
func TestKilledAtARejectionAndARerunCommitLeavesTheirAuditEntries(t *testing.T) {
	t.Parallel()
	n := newArmedNode(t, nodeOptions{})
	n.heldApply()
	n.killAtCommitOf("1", "bob", "reject", "1", "--reason", "not today")
	if runs := n.everyChangeAudited("after the kill"); runs["1"].Status != "rejected" {
		t.Fatalf("the rejection was not stored before the kill: %s", runs["1"].Status)
	}
	n.start()
	n.killAtCommitOf("2", "alice", "rerun", "1")
	if runs := n.everyChangeAudited("after the rerun's kill"); runs["2"].RerunOf != "1" {
		t.Fatalf("the rerun was not stored before the kill: %+v", runs["2"])
	}
	n.restartQuiet("2", "awaiting_approval", "failed")
}

// Killed right after a cancel commits: of a held run (it ends cancelled)
// and of a running one (the cancel is asked, the run is then interrupted
// by the kill); each has its entry.
func TestKilledAtACancelCommitLeavesItsAuditEntry(t *testing.T) {
	t.Parallel()
	n := newArmedNode(t, nodeOptions{})
	n.heldApply()
	n.killAtCommitOf("1", "alice", "cancel", "1")
	if runs := n.everyChangeAudited("after the held run's cancel"); runs["1"].Status != "cancelled" {
		t.Fatalf("the cancel was not stored before the kill: %s", runs["1"].Status)
	}

	s := newStandIn(t, atInit, "")
	m := newArmedNode(t, nodeOptions{pathFirst: s.dir})
	id := m.launch("open")
	s.waitStopped(m.node)
	m.killAtCommitOf(id, "alice", "cancel", id)
	if runs := m.everyChangeAudited("after the running run's cancel"); runs[id].CancelRequested != "alice" {
		t.Fatalf("the cancel of the running run was not stored before the kill: %+v", runs[id])
	}
	m.restartQuiet(id, "interrupted")
}

// Killed right after a reconcile commits: the reconcile run, its sealed
// plan and the check it carries the plan of are stored with both entries
// (the check's "reconciled" and the run's "reconcile").
func TestKilledAtAReconcileCommitLeavesItsAuditEntries(t *testing.T) {
	t.Parallel()
	n := newArmedNode(t, nodeOptions{})
	if out := n.mustSSH("alice", "launch", "open", "--check", "--wait"); !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("the check:\n%s", out)
	}
	n.killAtCommitOf("2", "alice", "reconcile", "1")
	runs := n.everyChangeAudited("after the kill")
	if runs["2"].Kind != "reconcile" || runs["1"].Check == nil || runs["1"].Check.ReconciledBy != "2" || runs["1"].Check.Kept {
		t.Fatalf("the reconcile was not stored whole before the kill: run 2 %+v, check %+v", runs["2"], runs["1"].Check)
	}
	n.start()
	if v := n.show("2"); v.Status != "awaiting_approval" || v.Proposal == nil {
		t.Fatalf("the reconcile after the restart: %s %q", v.Status, v.Message)
	}
	n.mustSSH("bob", "approve", "2", "--digest", n.show("2").Proposal.Digest)
	n.waitStatus("2", "succeeded", "failed", "stale")
	n.kill()
	if runs := n.everyChangeAudited("after the reconcile applied"); runs["2"].Status != "succeeded" {
		t.Errorf("the reconcile's sealed plan did not apply after the restart: %s %q", runs["2"].Status, runs["2"].Message)
	}
}
