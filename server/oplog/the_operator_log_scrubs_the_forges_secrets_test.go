package oplog

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
)

// A forge's token and webhook secret, as the file holds them, are among the
// scrubber's secrets: masked in the operator log, and among the Values a
// pull request's plan masks besides its own.
func TestTheOperatorLogScrubsTheForgesSecrets(t *testing.T) {
	src := `forge "corp" {
  type           = "gitea"
  url            = "https://git.example.com"
  token          = "tok-forge-5Hq9v0aZ"
  webhook_secret = "whsec-forge-Lm3x8Kp2Qr"
}
forge "lab" {
  type           = "gitlab"
  url            = "https://gitlab.example.com"
  token_command  = ["pass", "show", "gitlab"]
  webhook_secret = "whsec-lab-Zt7w1Nc4Ye"
}
`
	cfg, err := config.Parse([]byte(src), "s.hcl", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := NewScrubber(cfg)
	secrets := []string{"tok-forge-5Hq9v0aZ", "whsec-forge-Lm3x8Kp2Qr", "whsec-lab-Zt7w1Nc4Ye"}
	line := "forge: delivery refused: " + strings.Join(secrets, " ") + ` {"token":"tok-forge-5Hq9v0aZ"}`
	got := m.String(line)
	values := strings.Join(m.Values(), "\n")
	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("the operator log's scrubber left %q in clear: %s", s, got)
		}
		if !strings.Contains(values, s) {
			t.Errorf("%q is not among the scrubber's Values, which a pull request's plan masks", s)
		}
	}
	if !strings.Contains(got, "forge: delivery refused:") {
		t.Errorf("the scrubber masked more than the secrets: %s", got)
	}
}
