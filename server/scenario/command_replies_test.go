package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
	gossh "golang.org/x/crypto/ssh"
)

const slowTemplate = `
template "slow" {
  project = "infra"
  command = "infra/slow"
}
`

// A queued run says what it waits for; cancel says what it did for a
// queued, a running and a held run; cancel --wait returns once the run
// ended cancelled.
func TestCancelRepliesAndQueueReason(t *testing.T) {
	t.Parallel()
	h := newHarness(t, slowTemplate+dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "slow")
	waitLog(t, h, "1", "started-slow")
	h.mustSSH("alice", "launch", "slow")
	if out := h.mustSSH("alice", "show", "2"); !strings.Contains(out, "waiting behind run 1 in the same working directory") {
		t.Errorf("show of a queued run does not say what it waits for:\n%s", out)
	}
	if got := h.showRaw("alice", "2")["waits_behind"]; got != "waiting behind run 1 in the same working directory" {
		t.Errorf("waits_behind = %v", got)
	}
	if out := h.mustSSH("alice", "cancel", "2"); !strings.HasPrefix(out, "run 2 was queued and will not start\n") {
		t.Errorf("cancel of a queued run:\n%s", out)
	}
	out, _, code := h.ssh("alice", "cancel", "1", "--wait")
	if code != 0 || !strings.HasPrefix(out, "cancel sent: run 1 stops after tofu exits") || !strings.Contains(out, "run 1: cancelled") {
		t.Errorf("cancel --wait of a running run: exit %d\n%s", code, out)
	}
	if _, ok := h.showRaw("alice", "2")["waits_behind"]; ok {
		t.Errorf("a cancelled run still says what it waits for")
	}
	h.ssh("alice", "launch", "data", "--wait")
	h.waitStatus("3", store.StatusAwaitingApproval)
	if out := h.mustSSH("bob", "cancel", "3"); !strings.HasPrefix(out, "run 3 was held for approval and has been cancelled") {
		t.Errorf("cancel of a held run:\n%s", out)
	}
	for _, words := range [][]string{{"cancel", "99", "--wait"}, {"cancel", "3", "--wait"}, {"cancel", "3", "--json"}} {
		if out, errOut, code := h.ssh("alice", words...); code != api.ExitRefused || out != "" || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", words, code, out, errOut)
		}
	}
}

// approve --wait follows the released apply to its end (exit 0 when it
// succeeded, with the apply's log); a wrong digest is refused without
// waiting.
func TestApproveWaitFollowsTheApply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.ssh("alice", "launch", "data", "--wait")
	h.waitStatus("1", store.StatusAwaitingApproval)
	digest := h.show("bob", "1").Proposal.Digest
	if _, errOut, code := h.ssh("bob", "approve", "1", "--digest", "sha256:"+strings.Repeat("0", 64), "--wait"); code != api.ExitRefused || !strings.Contains(errOut, "not the digest") {
		t.Errorf("a wrong digest with --wait: exit %d, %q", code, errOut)
	}
	out, _, code := h.ssh("bob", "approve", "1", "--digest", digest, "--wait")
	if code != 0 || !strings.Contains(out, "run 1 released; following it") || !strings.Contains(out, "Apply complete!") || !strings.Contains(out, "run 1: succeeded") {
		t.Errorf("approve --wait: exit %d\n%s", code, out)
	}
	if strings.Count(out, "Plan: 3 to add") > 1 {
		t.Errorf("approve --wait repeats the plan's log")
	}
}

// whoami says who a key maps to: name, kind, roles, fingerprint.
func TestWhoami(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	fp := gossh.FingerprintSHA256(h.keys["alice"].PublicKey())
	out := h.mustSSH("alice", "whoami")
	for _, want := range []string{"name:  alice", "kind:  person", "roles: launch, approve", "key:   " + fp} {
		if !strings.Contains(out, want) {
			t.Errorf("whoami lacks %q:\n%s", want, out)
		}
	}
	var v sshd.WhoamiView
	if err := json.Unmarshal([]byte(h.mustSSH("deploy-bot", "whoami", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "deploy-bot" || v.Kind != "agent" || v.Roles == nil || len(v.Roles) != 0 ||
		v.KeyFingerprint != gossh.FingerprintSHA256(h.keys["deploy-bot"].PublicKey()) {
		t.Errorf("whoami --json of an agent: %+v", v)
	}
	if _, errOut, code := h.ssh("alice", "whoami", "bob"); code != api.ExitUsage || !strings.Contains(errOut, "whoami takes no arguments") {
		t.Errorf("whoami bob: exit %d, %q", code, errOut)
	}
}

// runs filters by status and template and keeps the newest N; a status
// that does not exist, a template nobody has and a bad limit are refused
// with what to give instead.
func TestRunsFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, brokenTemplate+dataTemplates)
	if out := strings.TrimSpace(h.mustSSH("bob", "runs", "--status", "failed", "--limit", "3", "--json")); out != "[]" {
		t.Errorf("filtered runs on an empty server = %q", out)
	}
	h.ssh("alice", "launch", "broken", "--wait")
	h.ssh("alice", "launch", "data-free", "--wait")
	h.ssh("alice", "launch", "broken", "--wait")
	ids := func(words ...string) string {
		var runs []struct{ ID string }
		if err := json.Unmarshal([]byte(h.mustSSH("bob", append(words, "--json")...)), &runs); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"runs"}, "3,2,1"},
		{[]string{"runs", "--status", "failed"}, "3,1"},
		{[]string{"runs", "--status", "succeeded,failed", "--limit", "2"}, "3,2"},
		{[]string{"runs", "--template", "data-free"}, "2"},
		{[]string{"runs", "--template", "broken", "--limit", "1"}, "3"},
		{[]string{"runs", "--status", "queued"}, ""},
	} {
		if got := ids(c.words...); got != c.want {
			t.Errorf("%v = %s, want %s", c.words, got, c.want)
		}
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"runs", "--status", "done"}, "give one of queued, running"},
		{[]string{"runs", "--template", "nosuch"}, "no such template"},
		{[]string{"runs", "--limit", "0"}, "1 or more"},
		{[]string{"runs", "--limit", "ten"}, "whole number"},
	} {
		if _, errOut, code := h.ssh("bob", c.words...); code != api.ExitRefused || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q", c.words, code, errOut)
		}
	}
}
