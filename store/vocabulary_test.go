package store

import (
	"errors"
	"strings"
	"testing"
)

// A move the table does not allow is a *TransitionError naming both
// statuses; a final status has nothing after it.
func TestTransitionErrorNamesBothStatuses(t *testing.T) {
	for from := range Transitions() {
		if from.Final() {
			t.Errorf("%s has followers but is final", from)
		}
	}
	err := StatusSucceeded.To(StatusRunning)
	var te *TransitionError
	if !errors.As(err, &te) || te.From != StatusSucceeded || te.To != StatusRunning {
		t.Fatalf("succeeded -> running: %v", err)
	}
	if !strings.Contains(err.Error(), "already ended (succeeded)") || !strings.Contains(err.Error(), "running") {
		t.Errorf("message %q", err)
	}
	if err := StatusQueued.To(StatusRunning); err != nil {
		t.Errorf("queued -> running: %v", err)
	}
	if len(StatusQueued.Next()) == 0 || len(StatusStale.Next()) != 0 {
		t.Error("Next disagrees with the table")
	}
}
