package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// Once, a worker's result whose status was no run status ended the run
// failed with the worker's own sentence, which could read like a success.
// Such a run now ends failed saying the status the worker reported is not
// a status a run ends with.
func TestAResultWithNoRunStatusEndsTheRunFailedSayingSo(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	ch := readWorker(raw)
	for i, status := range []store.Status{"banana", "", store.StatusRunning, store.StatusQueued} {
		id, job := leaseRun(t, h, raw, ch, "rnet", "--dry-run", "--var", "region=s"+string(rune('a'+i)))
		raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: status, Exit: 0,
			Message: "Plan complete: no changes. The run succeeded."})
		h.waitStatus(id, store.StatusFailed, store.StatusSucceeded)
		r, _ := h.db().GetRun(id)
		if r.Status != store.StatusFailed || !strings.Contains(r.Message, "not a status a run ends with") || strings.Contains(r.Message, "The run succeeded") {
			t.Errorf("a result with status %q: %s: %s", status, r.Status, r.Message)
		}
	}
}

// Once, `show` of a run queued on a pool none of whose workers was
// connected said it waited for a free worker. It now says no worker of
// the pool is connected.
func TestShowOfARunOnAPoolWithNoWorkerSaysNoneIsConnected(t *testing.T) {
	t.Parallel()
	h, _, _ := relayHarness(t, "")
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=none", "--json"))
	show := h.mustSSH("alice", "show", id)
	if !strings.Contains(show, "no worker of pool eu is connected") || strings.Contains(show, "free worker") {
		t.Errorf("show of a run no worker can take:\n%s", show)
	}
}
