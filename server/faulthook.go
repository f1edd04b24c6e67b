package server

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/switchtender/switchtender/store"
)

// killAfterCommitEnv names, for the fault suite, a file of run IDs (one a
// line): when the server's environment sets it, the process SIGKILLs
// itself right after a store transaction that wrote one of those runs
// commits, before anything else happens (it holds the store's write lock
// until the signal lands). A test writes the file, makes the server
// change the run (launch, approve, reject, cancel, reconcile), and then
// reads the store as the crash left it. Unset, nothing is read.
const killAfterCommitEnv = "SWITCHTENDER_KILL_AFTER_COMMIT"

// armKillAfterCommit sets db's commit hook when killAfterCommitEnv is set.
func armKillAfterCommit(db *store.DB) {
	path := os.Getenv(killAfterCommitEnv)
	if path == "" {
		return
	}
	db.SetCommitHook(func(runs []string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		for _, id := range strings.Fields(string(b)) {
			if slices.Contains(runs, id) {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal ends the process; nothing more is written
			}
		}
	})
}

// killAfterWebhookEnv, for the fault suite: when the server's environment
// sets it, the process SIGKILLs itself right after it answered 200 to a
// webhook delivery it stored, before the processor can act on it.
const killAfterWebhookEnv = "SWITCHTENDER_KILL_AFTER_WEBHOOK"

// killAfterAnswer flushes the answer written to w and, when
// killAfterWebhookEnv is set, kills the process.
func killAfterAnswer(w http.ResponseWriter) {
	if os.Getenv(killAfterWebhookEnv) == "" {
		return
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
