package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// audit shows the approval with its digest and rule to approvers, filters
// by run and time, and is refused to others.
func TestAuditCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.mustSSH("alice", "launch", "data", "--dry-run", "--wait")
	r, _ := h.db().GetRun("1")
	h.mustSSH("bob", "approve", "1", "--digest", r.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)

	var events []store.AuditEvent
	if err := json.Unmarshal([]byte(h.mustSSH("bob", "audit", "--run", "1", "--json")), &events); err != nil {
		t.Fatal(err)
	}
	var found bool
	for i, e := range events {
		if e.RunID != "1" || e.Hash == "" || (i > 0 && e.Seq <= events[i-1].Seq) {
			t.Errorf("event %+v", e)
		}
		if e.Action == "approve" && e.Actor == "bob" && strings.Contains(e.Detail, r.Proposal.Digest) && strings.Contains(e.Detail, "everything") {
			found = true
		}
	}
	if !found {
		t.Errorf("no approval with digest and rule in %+v", events)
	}
	if out := h.mustSSH("bob", "audit", "--since", "1h"); !strings.Contains(out, "launch") || !strings.Contains(out, "approve") {
		t.Errorf("audit text:\n%s", out)
	}
	if out := h.mustSSH("bob", "audit", "--since", "2099-01-01T00:00:00Z", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("audit of the future: %s", out)
	}
	for _, who := range []string{"carol", "deploy-bot"} {
		if _, errOut, code := h.ssh(who, "audit"); code != 1 || !strings.Contains(errOut, "approve role") {
			t.Errorf("%s: exit %d %q", who, code, errOut)
		}
	}
	if _, errOut, code := h.ssh("bob", "audit", "--since", "yesterday"); code != 2 || !strings.Contains(errOut, "neither a time") {
		t.Errorf("bad --since: exit %d %q", code, errOut)
	}
}
