package scenario

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
)

// TestAFlagSlipSaysWhatWasTypedAndWhatWasMeant checks the sentence for a
// flag a command does not have and for a run that is no number: the flag
// as it was typed (never a flag that was not), the command's own flag it
// is close to, and that RUN is a run number when a word is not one (a
// negative number included). A slip exits 2, a word that is no run number
// is refused as no run (exit 1, as in every door), and nothing runs.
func TestAFlagSlipSaysWhatWasTypedAndWhatWasMeant(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	cases := []struct {
		words     []string
		want, not string
	}{
		{[]string{"show", "4", "--change"}, "show: there is no flag --change (did you mean --changes?); see `help show`", ""},
		{[]string{"show", "4", "-change"}, "there is no flag -change (did you mean --changes?)", ""},
		{[]string{"show", "4", "--chnages"}, "there is no flag --chnages (did you mean --changes?)", ""},
		{[]string{"show", "4", "--Changes=true"}, "there is no flag --Changes (did you mean --changes?)", "=true"},
		{[]string{"log", "4", "--folow"}, "log: there is no flag --folow (did you mean --follow?)", ""},
		{[]string{"show", "4", "--nosuch"}, "show: there is no flag --nosuch; see `help show`", "did you mean"},
		{[]string{"show", "-1", "--changes"}, "show: there is no flag -1; RUN is a run number such as 4 (`runs` lists them); see `help show`", "--1"},
	}
	for _, c := range cases {
		out, errOut, code := h.ssh("alice", c.words...)
		if code != api.ExitUsage || !strings.Contains(errOut, c.want) || out != "" || (c.not != "" && strings.Contains(errOut, c.not)) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q, without %q", c.words, code, out, errOut, c.want, c.not)
		}
	}
	for _, words := range [][]string{{"show", "four"}, {"approve", "4th", "--digest", "sha256:aa"}} {
		// A word that is no run number names no run, as in every door,
		// and says what RUN is.
		want := fmt.Sprintf("no run %q: RUN is a run number such as 4 (`runs` lists them)", words[1])
		if out, errOut, code := h.ssh("alice", words...); code != api.ExitRefused || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", words, code, out, errOut, want)
		}
	}
	if _, errOut, code := h.ssh("alice", "show", "42"); code != api.ExitRefused || !strings.Contains(errOut, `no run "42"`) {
		t.Errorf("show 42: exit %d, %q; a number that is no run is still refused as one", code, errOut)
	}
	if runs, err := h.db().ListRuns(); err != nil || len(runs) != 0 {
		t.Fatalf("the slips queued runs: %v %+v", err, runs)
	}
}
