package scenario

import (
	"slices"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// A queued run the rules in force when it starts hold before planning is
// moved to awaiting_approval in the same store transaction as the audit
// entry that records the hold: at the commit that first stores the run as
// held, the entry is already in the trail. The hold once committed first
// and its entry followed in a second transaction, so a crash between the
// two left a held run with no entry, and the chain still verified.
func TestHoldAtStartIsAuditedInTheTransactionThatHoldsTheRun(t *testing.T) {
	t.Parallel()
	bot := "exemption \"bot\" {\n  agents = [\"deploy-bot\"]\n  templates = [\"data\"]\n}\n"
	h, _, release := slotHarness(t, bot)
	id := h.queued("deploy-bot", "data", "--dry-run")
	h.reloadReplacing(bot, "")
	db := h.db()
	var mu sync.Mutex
	seen, audited := false, false
	db.SetCommitHook(func(runs []string) {
		mu.Lock()
		defer mu.Unlock()
		if seen || !slices.Contains(runs, id) {
			return
		}
		r, err := db.GetRun(id)
		if err != nil || r.Status != store.StatusAwaitingApproval {
			return
		}
		seen = true
		events, err := db.AuditTrail(func(e store.AuditEvent) bool {
			return e.RunID == id && e.Action == string(store.StatusAwaitingApproval)
		})
		audited = err == nil && len(events) > 0
	})
	release()
	h.heldAtStart(id, "agent")
	db.SetCommitHook(nil)
	mu.Lock()
	defer mu.Unlock()
	if !seen {
		t.Fatal("no commit stored the run as held")
	}
	if !audited {
		t.Error("the commit that held the run at its start stored no audit entry of the hold; a crash after it leaves a held run with no entry")
	}
}
