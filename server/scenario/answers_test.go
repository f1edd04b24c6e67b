package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// sshStdin runs one command over a real SSH connection with stdin as its
// standard input.
func (h *harness) sshStdin(user, stdin string, args ...string) (string, string, int) {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatal(err)
	}
	defer client.Close()
	return testkit.SSHStdin(h.t, client, stdin, args...)
}

// A secret answer given with --answers - reaches the run, never a process
// argument list on the server's side nor the log; --var combines with it.
func TestAnswersFromStandardInput(t *testing.T) {
	t.Parallel()
	const canary = "stdin-canary-5150aa"
	h := newHarness(t, dataTemplates+secretDataTemplate+`
template "leak-check" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" {
    type      = "string"
    sensitive = true
  }
}
`)
	stop := make(chan struct{})
	seen := make(chan string, 1)
	go func() { // sample every process's argv while the run executes
		defer close(seen)
		for {
			select {
			case <-stop:
				return
			default:
			}
			matches, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, m := range matches {
				if b, err := os.ReadFile(m); err == nil && bytes.Contains(b, []byte(canary)) {
					seen <- m
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	out, errOut, code := h.sshStdin("alice", `{"db_password":"`+canary+`"}`, "launch", "leak-check", "--dry-run", "--answers", "-", "--wait")
	close(stop)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if m, ok := <-seen; ok {
		t.Errorf("the secret answer is in %s", m)
	}
	if strings.Contains(out, canary) || !strings.Contains(out, "db_password") && !strings.Contains(out, "sensitive value") {
		t.Errorf("log of the run:\n%s", out)
	}
	r, _ := h.db().GetRun("1")
	if len(r.SecretVars) != 1 || r.SecretVars[0] != "db_password" || len(r.SealedVars) == 0 {
		t.Errorf("run: secret vars %v", r.SecretVars)
	}

	// Combined with --var, typed values, and hostile input.
	_, errOut, code = h.sshStdin("alice", `{"instances":1,"token":"tok-canary-777"}`, "launch", "data-secret", "--answers", "-", "--var", "instances=2")
	if code != 2 || !strings.Contains(errOut, `"instances" is given both`) {
		t.Errorf("name in both: exit %d %q", code, errOut)
	}
	for _, bad := range []string{`not json tok-canary-777`, `["tok-canary-777"]`, `{"token":null}`, ``,
		`{"instances":1,"token":["tok-canary-777"]}`, `{"instances":1,"token":7770777}`, `{"instances":1,"instances":2,"token":"tok-canary-777"}`} {
		_, errOut, code = h.sshStdin("alice", bad, "launch", "data-secret", "--answers", "-")
		if code != 2 || strings.Contains(errOut, "tok-canary-777") {
			t.Errorf("stdin %q: exit %d %q", bad, code, errOut)
		}
	}
	out, errOut, code = h.sshStdin("alice", `{"instances":1,"token":"tok-canary-777"}`, "launch", "data-secret", "--answers", "-", "--json")
	if code != 0 || strings.Contains(out, "tok-canary-777") {
		t.Errorf("typed answers: exit %d %s %s", code, out, errOut)
	}
	if runs, _ := h.db().ListRuns(); len(runs) != 2 {
		t.Errorf("%d runs, want 2 (the refused launches queue nothing)", len(runs))
	}
}
