package forge

import (
	"strings"
	"testing"
)

// TestAClientIsRefusedABadAddressOrNoToken guards what the constructors
// refuse, each with an error naming the forge and saying what to write: an
// address that is no http(s) URL, one carrying credentials (which would
// leak into errors and logs), an empty token, and a Gitea without an
// address (there is no public one).
func TestAClientIsRefusedABadAddressOrNoToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ   Type
		base  string
		token string
		says  string
	}{
		{GitHub, "github.example.com", testToken, "https://host"},
		{GitLab, "ftp://gitlab.example.com", testToken, "https://host"},
		{Gitea, "https://bot:" + testToken + "@gitea.example.com", testToken, "not in the URL"},
		{GitHub, "https://github.example.com", "", "token is empty"},
		{GitLab, "", "  ", "token is empty"},
		{Gitea, "", testToken, "base URL is empty"},
	}
	for _, tc := range cases {
		c, err := New(tc.typ, tc.base, tc.token, nil)
		if err == nil || c != nil {
			t.Errorf("New(%s, %q, %q) = %v, %v; want refused", tc.typ, tc.base, tc.token, c, err)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, string(tc.typ)+": ") || !strings.Contains(msg, tc.says) {
			t.Errorf("New(%s, %q): %q, want it to start with %q and say %q", tc.typ, tc.base, msg, tc.typ+": ", tc.says)
		}
		if strings.Contains(msg, testToken) {
			t.Errorf("New(%s, %q): the error holds the token: %q", tc.typ, tc.base, msg)
		}
	}
}
