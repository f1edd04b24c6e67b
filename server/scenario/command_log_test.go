package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// log --follow ends with the run's status line and exits 0 only for a run
// that succeeded: 1 for one that failed, 3 for one held for approval; the
// JSON form ends with {"run", "status", "message"}.
func TestLogFollowEndsWithStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t, brokenTemplate+dataTemplates+approveAllData)
	h.ssh("alice", "launch", "broken", "--wait")
	h.waitStatus("1", store.StatusFailed)
	out, _, code := h.ssh("alice", "log", "1", "--follow")
	if code != api.ExitRefused || !strings.HasSuffix(out, "\n") || !strings.Contains(lastLine(out), "run 1 failed: ") {
		t.Errorf("log --follow of a failed run: exit %d, last line %q", code, lastLine(out))
	}
	if out, _, code := h.ssh("alice", "log", "1"); code != 0 || strings.Contains(out, "run 1 failed") {
		t.Errorf("log without --follow: exit %d, and a status line: %q", code, lastLine(out))
	}
	out, _, code = h.ssh("alice", "log", "1", "--follow", "--json")
	var end struct{ Run, Status, Message string }
	if err := json.Unmarshal([]byte(lastLine(out)), &end); err != nil || code != api.ExitRefused || end.Run != "1" || end.Status != "failed" || end.Message == "" {
		t.Errorf("log --follow --json of a failed run: exit %d, last line %q (%v)", code, lastLine(out), err)
	}
	h.ssh("alice", "launch", "data", "--wait")
	h.waitStatus("2", store.StatusAwaitingApproval)
	if out, _, code := h.ssh("alice", "log", "2", "--follow"); code != sshd.ExitHeld || !strings.HasPrefix(lastLine(out), "run 2 awaiting_approval: ") {
		t.Errorf("log --follow of a held run: exit %d, last line %q", code, lastLine(out))
	}
}

// log of a run that does not exist, or with a flag it lacks, is refused the
// same way with and without --json.
func TestLogHostile(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	for _, words := range [][]string{{"log", "9", "--follow", "--json"}, {"log", "9", "--json"}} {
		out, errOut, code := h.ssh("alice", words...)
		if code != api.ExitRefused || out != "" || !strings.Contains(errOut, `"code":"not_found"`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", words, code, out, errOut)
		}
	}
	if _, errOut, code := h.ssh("alice", "log", "9", "--tail"); code != api.ExitUsage || !strings.Contains(errOut, "there is no flag --tail") {
		t.Errorf("log --tail: exit %d, %q", code, errOut)
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
