package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// sealedPlanTemplates are gated applies of infra/slow on pool eu and on
// the control node, held for bob, and one on the pool that a plan-content
// rule measures and passes on to its apply phase without a hold.
const sealedPlanTemplates = `
template "rplan" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
template "cplan" {
  project = "infra"
  command = "infra/slow"
}
template "rpass" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
template "rdata" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
  survey "instances" {
    type    = "number"
    default = 3
  }
}
rule "hold-plans" {
  templates        = ["rplan", "cplan"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
rule "measure-rpass" {
  templates   = ["rpass"]
  max_destroy = 5
}
`

// Configurations of infra/slow: one that applies, one whose apply fails,
// one whose apply takes a minute.
const (
	applyingTF = "resource \"terraform_data\" \"x\" {\n  input = \"ok\"\n}\n"
	failingTF  = "resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" { command = \"exit 3\" }\n}\n"
	slowTF     = "resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" { command = \"echo started-slow; sleep 60\" }\n}\n"
)

// writeSlowDir replaces infra/slow's configuration in checkout with tf.
func writeSlowDir(t *testing.T, checkout, tf string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(checkout, "infra/slow/main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// heldWithPlan launches template and waits for it to be held with its
// sealed plan in the store; it returns the run and its plan's digest.
func heldWithPlan(t *testing.T, h *harness, template string) (string, string) {
	t.Helper()
	id := runIDOf(t, h.mustSSH("alice", "launch", template, "--json"))
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	if r.Status != StatusAwaitingApproval || r.Proposal == nil {
		t.Fatalf("run %s of %s: %s: %s", id, template, r.Status, r.Message)
	}
	if _, err := h.srv.db.GetBlob(blobPlan, id); err != nil {
		t.Fatalf("held run %s has no sealed plan in the store: %v", id, err)
	}
	return id, r.Proposal.Digest
}

// noSealedPlan fails the test when the store holds a sealed plan of run id.
func noSealedPlan(t *testing.T, h *harness, id string) {
	t.Helper()
	r, _ := h.srv.db.GetRun(id)
	if _, err := h.srv.db.GetBlob(blobPlan, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run %s ended %s (%s) and the store still holds its sealed plan (%v)", id, r.Status, r.Message, err)
	}
	keys, err := h.srv.db.ListBlobs(blobPlan)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k == id {
			t.Errorf("the store's sealed plans still list run %s", id)
		}
	}
}

// After a gated apply ends, however it ends and whichever node ran it,
// the store holds no sealed plan of it: on a relay pool applied, failed,
// lost with its worker (a process SIGKILLed mid-apply), cancelled while
// applying, rejected, passed on by a rule without a hold, or a reconcile
// applied; on the control node applied or failed. The break it guards: a
// relay pool's apply ended through the relay's own end, which did not drop
// the plan the control node's end drops, so it stayed sealed in the store
// after the run (the spec: "wiped when the apply ends").
func TestEveryEndedApplyLeavesNoSealedPlan(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string
		want Status
		say  string // what the run's message says, if anything in particular
	}{
		{"relay applied", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			startWorker(t, pooledWorker(t, h, keys, identity, applyingTF))
			id, digest := heldWithPlan(t, h, "rplan")
			h.mustSSH("bob", "approve", id, "--digest", digest)
			return id
		}, StatusSucceeded, ""},
		{"relay apply failed", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			startWorker(t, pooledWorker(t, h, keys, identity, failingTF))
			id, digest := heldWithPlan(t, h, "rplan")
			h.mustSSH("bob", "approve", id, "--digest", digest)
			return id
		}, StatusFailed, ""},
		{"relay worker lost mid-apply", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			kill := workerProcess(t, pooledWorker(t, h, keys, identity, slowTF))
			id, digest := heldWithPlan(t, h, "rplan")
			h.mustSSH("bob", "approve", id, "--digest", digest)
			waitFor(t, "the slow apply", 90*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "log", id), "started-slow") })
			kill()
			return id
		}, StatusFailed, "stopped heartbeating during apply: "},
		{"relay apply cancelled", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			startWorker(t, pooledWorker(t, h, keys, identity, slowTF))
			id, digest := heldWithPlan(t, h, "rplan")
			h.mustSSH("bob", "approve", id, "--digest", digest)
			waitFor(t, "the slow apply", 90*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "log", id), "started-slow") })
			h.mustSSH("alice", "cancel", id)
			return id
		}, StatusCancelled, ""},
		{"relay rejected", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			startWorker(t, pooledWorker(t, h, keys, identity, applyingTF))
			id, _ := heldWithPlan(t, h, "rplan")
			h.mustSSH("bob", "reject", id, "--reason", "not now")
			return id
		}, StatusRejected, ""},
		{"relay passed on without a hold", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			startWorker(t, pooledWorker(t, h, keys, identity, applyingTF))
			return runIDOf(t, h.mustSSH("alice", "launch", "rpass", "--json"))
		}, StatusSucceeded, ""},
		{"relay reconcile applied", func(t *testing.T, h *harness, keys map[string]relayKey, identity string) string {
			startWorker(t, pooledWorker(t, h, keys, identity, applyingTF))
			if v := h.launchWait("alice", "rdata"); v.Status != StatusSucceeded {
				t.Fatalf("the first apply: %s %s", v.Status, v.Message)
			}
			check := h.launchWait("alice", "rdata", "--check", "--var", "instances=2")
			if check.Check == nil || !check.Check.Kept {
				t.Fatalf("the check kept no plan: %s %s", check.Status, check.Message)
			}
			var rec runView
			if err := json.Unmarshal([]byte(h.mustSSH("alice", "reconcile", check.ID, "--json")), &rec); err != nil || rec.Proposal == nil {
				t.Fatalf("reconcile: %v %+v", err, rec)
			}
			if _, err := h.srv.db.GetBlob(blobPlan, rec.ID); err != nil {
				t.Fatalf("the held reconcile has no sealed plan: %v", err)
			}
			h.mustSSH("bob", "approve", rec.ID, "--digest", rec.Proposal.Digest)
			return rec.ID
		}, StatusSucceeded, ""},
		{"control node applied", func(t *testing.T, h *harness, _ map[string]relayKey, _ string) string {
			writeSlowDir(t, h.project, applyingTF)
			id, digest := heldWithPlan(t, h, "cplan")
			h.mustSSH("bob", "approve", id, "--digest", digest)
			return id
		}, StatusSucceeded, ""},
		{"control node apply failed", func(t *testing.T, h *harness, _ map[string]relayKey, _ string) string {
			writeSlowDir(t, h.project, failingTF)
			id, digest := heldWithPlan(t, h, "cplan")
			h.mustSSH("bob", "approve", id, "--digest", digest)
			return id
		}, StatusFailed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, keys, identity := relayHarness(t, sealedPlanTemplates)
			id := c.run(t, h, keys, identity)
			h.waitStatus(id, StatusSucceeded, StatusFailed, StatusCancelled, StatusRejected, StatusStale, StatusInterrupted, StatusRefused)
			if r, _ := h.srv.db.GetRun(id); r.Status != c.want {
				t.Fatalf("run %s ended %s, want %s: %s", id, r.Status, c.want, r.Message)
			} else if !strings.Contains(r.Message, c.say) {
				t.Errorf("run %s's message %q lacks %q", id, r.Message, c.say)
			}
			noSealedPlan(t, h, id)
		})
	}
}

// pooledWorker is worker w1 of pool eu, with infra/slow in its checkout
// configured as tf.
func pooledWorker(t *testing.T, h *harness, keys map[string]relayKey, identity, tf string) *config.Worker {
	t.Helper()
	w := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	writeSlowDir(t, w.Projects["infra"].Path, tf)
	return w
}

// A sealed plan an earlier version left in the store for a run that had
// ended is dropped when the server starts; a held run's plan stays. The
// break it guards: relay applies that ended before the fix kept their
// sealed plans for good.
func TestStartDropsSealedPlansOfRunsThatEnded(t *testing.T) {
	h, keys, identity := relayHarness(t, sealedPlanTemplates)
	startWorker(t, pooledWorker(t, h, keys, identity, applyingTF))
	writeSlowDir(t, h.project, applyingTF)
	ended := h.launchWait("alice", "rpass")
	if ended.Status != StatusSucceeded {
		t.Fatalf("the apply: %s %s", ended.Status, ended.Message)
	}
	held, _ := heldWithPlan(t, h, "cplan")
	path := h.srv.db.Path()
	h.stop()
	db, err := store.Open(path) // as an earlier version would: no rule drops it
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutBlob(blobPlan, ended.ID, []byte("an ended run's sealed plan")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	h.start()
	noSealedPlan(t, h, ended.ID)
	if _, err := h.srv.db.GetBlob(blobPlan, held); err != nil {
		t.Errorf("the held run's sealed plan was dropped at start: %v", err)
	}
}
