package scenario

// A relay worker gets only its own run's secrets, and nothing a worker sends
// or the workers command shows carries a key or a secret.

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// The control node masks a worker's log lines again with every value it
// sealed into the payload: a worker that leaks the credential and the secret
// answer in clear, in a log line and in its result's message, leaks neither
// into the stored log or the run's message.
func TestAWorkersLogIsMaskedAgainOnTheControlNode(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rsecret", "--dry-run", "--var", "db_password="+relayPassword)
	if job.Clear || bytes.Contains(job.Payload, []byte(relayCloudKey)) || bytes.Contains(job.Payload, []byte(relayPassword)) {
		t.Errorf("the payload carries a secret in clear")
	}
	raw.Send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "key=" + relayCloudKey + " pw=" + relayPassword + "\n"})
	raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: store.StatusFailed, Message: "failed with " + relayCloudKey})
	h.waitStatus(id, store.StatusFailed, store.StatusSucceeded)
	log := h.mustSSH("alice", "log", id)
	r, _ := h.db().GetRun(id)
	for _, s := range []string{relayCloudKey, relayPassword} {
		if strings.Contains(log, s) || strings.Contains(r.Message, s) {
			t.Errorf("%q reached the stored log or message", s)
		}
	}
}

// `workers` shows carol and an agent names, pools, versions, states and runs
// only: no key, fingerprint or path of a worker.
func TestTheWorkersCommandShowsNoKey(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	_ = raw
	for _, who := range []string{"carol", "deploy-bot"} {
		out, _, _ := h.ssh(who, "workers", "--json")
		var vs []map[string]any
		_ = json.Unmarshal([]byte(out), &vs)
		for _, bad := range []string{"SHA256:", "ssh-ed25519", "AAAA", "/tmp", "age1", keys["w2"].Line} {
			if strings.Contains(out, bad) {
				t.Errorf("%s's workers output holds %q: %s", who, bad, out)
			}
		}
	}
}

// Promise (no secret answer leaks; the control node keeps the keys; a pool
// without a delivery key runs a run that holds no secret). Once, every secret
// answer any earlier run of the project gave went into each payload, so a
// worker received a password from a run it had no part in, and a pool without
// a delivery key refused every later run.
func TestAWorkerGetsOnlyItsOwnRunsSecretAnswers(t *testing.T) {
	t.Parallel()
	const prod = "prod-db-password-13e"
	h, keys, identity := relayHarness(t, localSecretTemplate)
	if v := h.launchWait("alice", "lsecret13e", "--dry-run", "--var", "db_password="+prod); v.PlannedBy != "" {
		t.Fatalf("the local template ran on a worker: %+v", v.PlannedBy)
	}
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := takeRun(t, h, raw, "rnet", "--dry-run", "--var", "region=nosecret")
	key, err := seal.LoadKey(identity)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := seal.Open(key, id, job.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var p relay.Payload
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Secrets, prod) {
		t.Errorf("worker w2 received, for a dry run of rnet with no secret (vars %v, env %v), the password alice answered for run 1 on the control node: secrets %q",
			p.Vars, p.Env, p.Secrets)
	}

	bare, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare"})
	bare.Send(relay.Msg{Type: relay.MsgPoll})
	bid := runIDOf(t, h.mustSSH("alice", "launch", "bnet", "--dry-run", "--var", "region=nosecret", "--json"))
	if m := bare.Recv(); m.Type != relay.MsgOffer || m.Run != bid {
		t.Fatalf("offer %+v", m)
	}
	bare.Send(relay.Msg{Type: relay.MsgTake, Run: bid})
	if m := bare.Recv(); m.Type != relay.MsgJob {
		r, _ := h.db().GetRun(bid)
		t.Errorf("a dry run of bnet with no credential and no secret answer was refused on pool bare because of an earlier run's answer: %s: %s", r.Status, r.Message)
	}
}

// localSecretTemplate is a template the control node runs itself, over
// the same project as the pools' templates, with a secret answer.
const localSecretTemplate = `
template "lsecret13e" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" { type = "string" }
}
`
