package scenario

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// A dry run and an ungated apply run on a worker that dialled the control
// node over SSH, with real OpenTofu in the worker's own checkout: the
// credentials and secret answers reach it sealed, are masked on the worker
// (and again on the control node), the run records the worker and its
// steps, and `workers` lists it.
func TestRelayRunsOnWorkerOverSSH(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	sha := gitCommitAll(t, w1.Projects["infra"].Path)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })

	v := h.launchWait("alice", "rnet", "--dry-run", "--var", "region=eu-west-9")
	if v.Status != store.StatusSucceeded || v.PlannedBy != "w1" || !strings.Contains(v.Message, "worker w1") {
		t.Fatalf("dry run on the worker: %s planned_by=%q %s", v.Status, v.PlannedBy, v.Message)
	}
	if v.Commit == nil || v.Commit.SHA != sha {
		t.Errorf("the run records commit %+v, want the worker's checkout's %s", v.Commit, sha)
	}
	if got := strings.Join(stepNames(v), ","); got != "init,plan" {
		t.Errorf("steps %s, want init,plan", got)
	}
	log := h.mustSSH("alice", "log", v.ID)
	if !strings.Contains(log, "vpc-eu-west-9") || !strings.Contains(log, "leased to worker w1 of pool eu") {
		t.Errorf("dry run log:\n%s", log)
	}
	if show := h.mustSSH("alice", "show", v.ID); !strings.Contains(show, "planned on relay worker w1") {
		t.Errorf("show does not name the worker:\n%s", show)
	}

	a := h.launchWait("alice", "rsecret", "--var", "db_password="+relayPassword)
	if a.Status != store.StatusSucceeded || a.AppliedBy != "w1" {
		t.Fatalf("ungated apply on the worker: %s applied_by=%q %s", a.Status, a.AppliedBy, a.Message)
	}
	alog := h.mustSSH("alice", "log", a.ID)
	for _, secret := range []string{relayCloudKey, relayPassword, base64.StdEncoding.EncodeToString([]byte(relayCloudKey))} {
		if strings.Contains(alog, secret) {
			t.Errorf("the log holds a secret %q:\n%s", secret, alog)
		}
	}
	if !strings.Contains(alog, "cloud=***") || !strings.Contains(alog, "Apply complete!") {
		t.Errorf("apply log:\n%s", alog)
	}
	if _, err := os.Stat(filepath.Join(w1.Projects["infra"].Path, "infra/secret/terraform.tfstate")); err != nil {
		t.Errorf("the apply's state is not in the worker's checkout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/secret/terraform.tfstate")); err == nil {
		t.Errorf("the apply ran in the control node's checkout")
	}
	var ws []api.WorkerView
	if err := json.Unmarshal([]byte(h.mustSSH("alice", "workers", "--json")), &ws); err != nil || len(ws) != 1 ||
		ws[0].Name != "w1" || ws[0].Pool != "eu" || ws[0].Version != "test" || ws[0].State != "idle" {
		t.Errorf("workers --json: %+v %v", ws, err)
	}
	for _, path := range h.dataFiles() {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), relayCloudKey) || strings.Contains(string(b), relayPassword) {
			t.Errorf("the control node's %s holds a secret in clear", path)
		}
	}
}

// The MCP tool list_workers gives an agent what `workers --json` gives a
// person: a connected worker, its pool and state.
func TestRelayWorkersOverMCP(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	var out sshd.MCPWorkers
	h.mcpAs("deploy-bot").OK("list_workers", map[string]any{}, &out)
	if len(out.Workers) != 1 || out.Workers[0].Name != "w1" || out.Workers[0].Pool != "eu" || out.Workers[0].State != "idle" || out.Workers[0].LastSeen.IsZero() {
		t.Fatalf("list_workers = %+v", out.Workers)
	}
}

// A second worker process started with a connected worker's name and key
// is told the name is in use and tries again later; the first keeps its
// connection and takes the next run.
func TestRelaySecondProcessOfANameDoesNotDisplaceTheFirst(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "idle") })
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	waitFor(t, "the second process to be refused", 20*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "audit"), "is connected and was heard from")
	})
	v := h.launchWait("alice", "rnet", "--dry-run", "--var", "region=twice")
	if v.Status != store.StatusSucceeded || v.PlannedBy != "w1" {
		t.Fatalf("a dry run with two processes of w1 about: %s by %q: %s", v.Status, v.PlannedBy, v.Message)
	}
}

// A worker is offered only runs of projects its file has a checkout of;
// the run says what it waits for, and the worker that has it takes it.
func TestRelayOffersOnlyAWorkersProjects(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Projects: []string{"other"}})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=pr", "--json"))
	waitFor(t, "the run to say what it waits for", 10*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "show", id), "whose file has a checkout of project infra")
	})
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed)
	if r, _ := h.db().GetRun(id); r.Status != store.StatusSucceeded || r.PlannedBy != "w1" {
		t.Fatalf("the run: %s by %q: %s", r.Status, r.PlannedBy, r.Message)
	}
}
