package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// The sealing key changed under a held plan: the start names the run (in
// ProblemList and the operator log), approve is refused with the reason and
// leaves the run held, and `check`'s CheckData names it too.
func TestChangedSealKeyNamesHeldRuns(t *testing.T) {
	t.Parallel()
	h, logs := newLoggedHarness(t, "", dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", store.StatusAwaitingApproval)
	v := h.show("bob", "1")
	if v.Proposal == nil || v.Proposal.Stage != store.StagePlan {
		t.Fatalf("run 1 is not held with a saved plan: %+v", v.Proposal)
	}
	h.stop()
	keyPath := filepath.Join(h.dir, "data", "seal.key")
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	h.start() // a new key is made
	var named bool
	for _, p := range h.srv.ProblemList() {
		named = named || (p.Where == "run 1" && strings.Contains(p.What, "held plan"))
	}
	if !named {
		t.Errorf("ProblemList does not name run 1: %v", h.srv.ProblemList())
	}
	if !strings.Contains(logs.String(), `"run":"1","reason":"the sealing key cannot open its held plan`) {
		t.Errorf("the operator log does not name run 1:\n%s", logs.String())
	}
	_, errOut, code := h.ssh("bob", "approve", "1", "--digest", v.Proposal.Digest)
	if code != api.ExitRefused || !strings.Contains(errOut, "cannot be approved: the sealing key cannot open its held plan") {
		t.Errorf("approve: exit %d %s", code, errOut)
	}
	if v := h.show("bob", "1"); v.Status != store.StatusAwaitingApproval || len(v.Approvals) != 0 {
		t.Errorf("after the refused approve run 1 is %s with %d approvals", v.Status, len(v.Approvals))
	}
	if _, errOut, _ := h.ssh("carol", "approve", "1", "--digest", v.Proposal.Digest); strings.Contains(errOut, "sealing key") {
		t.Errorf("carol, who may not approve, was told about the key: %s", errOut)
	}
	busy, note := server.CheckData(filepath.Join(h.dir, "data"), keyPath, "") // the server holds the store
	if len(busy) != 0 || !strings.Contains(note, "in use by a running server") {
		t.Errorf("CheckData on a store in use: %v %q", busy, note)
	}
	h.stop()
	found, _ := server.CheckData(filepath.Join(h.dir, "data"), keyPath, "")
	if len(found) != 1 || found[0].Where != "run 1" {
		t.Errorf("CheckData: %v", found)
	}
	if found, note := server.CheckData(filepath.Join(h.dir, "nothing"), keyPath, ""); len(found) != 0 || note != "" {
		t.Errorf("CheckData without a data directory: %v %q", found, note)
	}
}
