package server

import (
	"fmt"
	"io"
	"net/http"
	osexec "os/exec"
	"strings"
	"testing"
)

// A delivery the receiver refuses is answered 401 with the sentence that
// says what was wrong with its signature (the forge shows the answer in
// its delivery log), never with the secret: a webhook without a secret is
// told to set one, a wrong one that its signature is not the body's MAC.
func TestARefusedDeliveryIsAnsweredWithWhatWasWrong(t *testing.T) {
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skip("git is not on the PATH")
	}
	t.Parallel()
	const secret = "whsec-refusal-3Kq8Vd2Lm"
	checkout := t.TempDir()
	for _, args := range [][]string{{"init", "--quiet"}, {"remote", "add", "origin", "http://127.0.0.1:9/platform/web.git"}} {
		if out, err := osexec.Command("git", append([]string{"-C", checkout}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	h := newHarnessWith(t, "  webhook_listen = \"127.0.0.1:0\"\n", fmt.Sprintf(`forge "corp" {
  type           = "gitea"
  url            = "http://127.0.0.1:9"
  token          = "tok-refusal-8Hd3Qw1Z"
  webhook_secret = %q
  poll_every     = "1h"
}
project "web" {
  path       = %q
  forge      = "corp"
  repository = "platform/web"
}
`, secret, checkout))
	url := "http://" + h.srv.WebhookAddr() + "/webhooks/corp"
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    []string
	}{
		{"a webhook without a secret", map[string]string{"X-Gitea-Signature": "", "X-Hub-Signature-256": "sha256="},
			[]string{"not signed", "webhook_secret"}},
		{"a webhook with another secret", map[string]string{"X-Gitea-Signature": strings.Repeat("ab", 32)},
			[]string{"X-Gitea-Signature", "HMAC-SHA256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"action":"opened"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Gitea-Event", "pull_request")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("the answer does not say %q: %s", w, body)
				}
			}
			if strings.Contains(string(body), secret) {
				t.Errorf("the answer names the secret: %s", body)
			}
		})
	}
}
