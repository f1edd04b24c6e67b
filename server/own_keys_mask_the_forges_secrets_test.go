package server

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// The forges' tokens and webhook secrets are the server's own credentials:
// every run's masker holds them (as written, and in lower and upper case,
// as the key files), the operator log's scrubber does, and a pull
// request's plan masks them with the rest of the file's secrets.
func TestEveryRunMasksTheForgesSecrets(t *testing.T) {
	t.Parallel()
	h := writeHarness(t, "", `forge "corp" {
  type           = "gitea"
  url            = "https://git.example.com"
  token          = "tok-forge-7Yc2Wd9Q"
  webhook_secret = "whsec-forge-4Rb8Ns1Lp"
}
`)
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(cfg, Options{Environ: testEnviron})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	secrets := []string{"tok-forge-7Yc2Wd9Q", "whsec-forge-4Rb8Ns1Lp"}
	var forms []string
	for _, s := range secrets {
		forms = append(forms, s, strings.ToLower(s), strings.ToUpper(s))
	}
	text := "printed: " + strings.Join(forms, " | ")
	run := mask.New()
	srv.maskOwnKeys(run)
	pr := mask.New()
	srv.maskConfigSecrets(pr, store.Run{Commit: &store.Commit{Ref: "refs/pull/1/head"}})
	for what, got := range map[string]string{
		"every run's log": run.String(text), "the operator log": srv.scrub(text), "a pull request's plan": pr.String(text),
	} {
		for _, f := range forms {
			if what != "every run's log" && f != secrets[0] && f != secrets[1] {
				continue // the file's secrets beyond the server's own are masked as written
			}
			if strings.Contains(got, f) {
				t.Errorf("%s shows %q in clear: %s", what, f, got)
			}
		}
	}
}
