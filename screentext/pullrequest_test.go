package screentext

import (
	"strings"
	"testing"
)

// A full SHA (40 or 64 hex digits) is shortened to 8; anything else a
// forge sends is shown whole, escaped, so nothing of it is cut unseen.
func TestShortCommitShortensOnlyAFullSHA(t *testing.T) {
	for in, want := range map[string]string{
		strings.Repeat("ab", 20):       "abababab",
		strings.Repeat("Cd", 32):       "CdCdCdCd",
		"1a2b3c4d5e":                   "1a2b3c4d5e",
		strings.Repeat("zz", 20):       strings.Repeat("zz", 20),
		"head\x1b[2J":                  `head\x1b[2J`,
		"":                             "",
		strings.Repeat("ab", 21):       strings.Repeat("ab", 21),
		strings.Repeat("a", 39) + "\n": strings.Repeat("a", 39) + `\n`,
	} {
		if got := ShortCommit(in); got != want {
			t.Errorf("ShortCommit(%q) = %q, want %q", in, got, want)
		}
	}
}

// The pull request's phrase names the forge, repository#number, the head
// and (for a merge's apply) the merge commit, each value escaped as a unit.
func TestPullRequestSaysWhichPullRequestInOnePhrase(t *testing.T) {
	head, merge := strings.Repeat("1a", 20), strings.Repeat("5e", 20)
	for _, c := range []struct{ got, want string }{
		{PullRequest("corp", "platform/infra", 12, head, ""), "corp platform/infra#12 at 1a1a1a1a (head)"},
		{PullRequest("corp", "platform/infra", 12, head, merge), "corp platform/infra#12 at 1a1a1a1a (head), merge 5e5e5e5e"},
		{PullRequest("", "o/r", 1, "", ""), "o/r#1"},
		{PullRequest("c\norp", "o/r\x1b[1m", 1, "", ""), `c\norp o/r\x1b[1m#1`},
		{PullRequestRef("platform/infra", 12, head), "platform/infra#12 1a1a1a1a"},
		{PullRequestRef("platform/infra", 12, ""), "platform/infra#12"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
