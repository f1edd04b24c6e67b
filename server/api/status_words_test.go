package api

import (
	"testing"

	"github.com/switchtender/switchtender/store"
)

// TestEveryStatusReadsAsASentenceAfterItsRun checks the words a sentence
// gives each status after its run: "is" only before a status a run
// stands in, what became of it otherwise, and "has ended (…)" for a final
// one; a check that kept no plan says what became of it ("it succeeded").
func TestEveryStatusReadsAsASentenceAfterItsRun(t *testing.T) {
	said := map[store.Status]string{
		store.StatusQueued: "is queued", store.StatusRunning: "is running", store.StatusAwaitingApproval: "is awaiting approval",
		store.StatusSucceeded: "succeeded", store.StatusFailed: "failed", store.StatusCancelled: "was cancelled",
		store.StatusInterrupted: "was interrupted", store.StatusRejected: "was rejected", store.StatusRefused: "was refused",
		store.StatusStale: "is stale",
	}
	for s, want := range said {
		if got := StatusSaid(s); got != want {
			t.Errorf("StatusSaid(%s) = %q, want %q", s, got, want)
		}
		ended := want
		if s.Final() {
			ended = "has ended (" + string(s) + ")"
		}
		if got := Ended(s); got != ended {
			t.Errorf("Ended(%s) = %q, want %q", s, got, ended)
		}
	}
	note := ReconcileNote(store.Run{ID: "5", Kind: store.KindCheck, Status: store.StatusSucceeded})
	if note != "cannot be proposed: the check kept no plan (it succeeded)" {
		t.Errorf("a check that kept no plan: %q", note)
	}
}
