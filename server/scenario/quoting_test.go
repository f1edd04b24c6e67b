package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
)

const listMapTemplate = `
template "tags" {
  project = "infra"
  command = "infra/network"
  survey "tags" {
    type = "list"
  }
  survey "labels" {
    type = "map"
    default = {}
  }
  survey "region" {
    type = "number"
    default = 1
  }
}
`

// A list or map answer whose JSON quotes the server's split ate (the user
// quoted it once) is refused with why and how to quote it twice; other
// refusals, and answers from standard input, get no such hint.
func TestListAnswerOverSSHSaysQuoteTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, listMapTemplate)
	for _, c := range []struct{ words []string }{
		{[]string{"launch", "tags", "--var", "tags=[a,b]"}},
		{[]string{"launch", "tags", "--var", "tags=x", "--var", "labels={team:infra}"}},
	} {
		_, errOut, code := h.ssh("alice", c.words...)
		if code != api.ExitRefused || !strings.Contains(errOut, "split twice") || !strings.Contains(errOut, "--answers -") {
			t.Errorf("%v: exit %d, %q", c.words, code, errOut)
		}
	}
	_, errOut, code := h.ssh("alice", "launch", "tags", "--var", "tags=x", "--var", "region=abc")
	if code != api.ExitRefused || strings.Contains(errOut, "split twice") {
		t.Errorf("a number field's refusal: exit %d, %q", code, errOut)
	}
}
