package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
)

// TestApprovingAFinishedRunSaysItHasEnded approves and rejects a dry
// run that succeeded: the refusal says the run "has ended (succeeded)",
// never that it "is succeeded".
func TestApprovingAFinishedRunSaysItHasEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	h.mustSSH("alice", "launch", "network", "--dry-run", "--var", "region=eu-west-1", "--wait")
	for _, words := range [][]string{
		{"approve", "1", "--digest", "sha256:" + strings.Repeat("ab", 32)},
		{"reject", "1", "--reason", "no"},
	} {
		_, errOut, code := h.ssh("alice", words...)
		if code != api.ExitRefused || !strings.Contains(errOut, "run 1 has ended (succeeded) and awaits no approval") || strings.Contains(errOut, "is succeeded") {
			t.Errorf("%v: exit %d, %q; want it to say run 1 has ended (succeeded)", words, code, errOut)
		}
	}
}
