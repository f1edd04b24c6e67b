package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

// brokenPolicy is a plan_gate that does not compile.
const brokenPolicy = "package switchtender.plan\n\ndeny contains msg if {\n  msg := \n}\n"

// denyDataPolicy refuses creating terraform_data.
const denyDataPolicy = `package switchtender.plan

deny contains msg if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
	"create" in rc.change.actions
	msg := sprintf("%s: creating terraform_data is not allowed here", [rc.address])
}
`

// writePolicy writes a policy file in a fresh directory and returns its path.
func writePolicy(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// check and serve judge a configuration alike, and reload acts on the same
// judgement: for each bad configuration, Check (what `switchtender check`
// prints) and a server's ProblemList (what serve logs and refuses on) list
// the same problems with the same severities, and a reload to it is
// refused exactly when they hold an error. The break it guards: check
// passed a non-loopback metrics_listen serve warned about, and serve and
// reload took a plan_gate that does not compile, so its rule held for an
// approver what the policy meant to refuse.
func TestCheckServeAndReloadJudgeAConfigurationAlike(t *testing.T) {
	t.Parallel()
	broken := writePolicy(t, "broken.rego", brokenPolicy)
	cases := []struct {
		name, serverExtra, extra string
		want                     server.Severity // the worst severity found
		mention                  string
	}{
		{"plan_gate that does not compile", "", "rule \"broken\" {\n  plan_gate = \"" + broken + "\"\n}\n", server.SeverityError, "broken.rego"},
		{"metrics_listen on every address", "  metrics_listen = \"0.0.0.0:0\"\n", "", server.SeverityWarning, "not a loopback address"},
		{"metrics_listen on a host name", "  metrics_listen = \"switchtender.internal:9464\"\n", "", server.SeverityWarning, "not a loopback address"},
		{"working directory missing", "", "template \"gone\" {\n  project = \"infra\"\n  command = \"infra/missing\"\n}\n", server.SeverityWarning, "infra/missing"},
		{"credential command not found", "", "credential \"vault\" {\n  command = [\"no-such-vault-cli\"]\n  env_var = \"TOKEN\"\n}\n", server.SeverityWarning, "no-such-vault-cli"},
	}
	live := newHarness(t, networkTemplate)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := writeHarness(t, c.serverExtra, c.extra)
			cfg, err := config.Load(h.cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			checked := server.Check(cfg, testkit.Environ())
			srv, err := server.New(cfg, server.Options{Environ: testkit.Environ()})
			if err != nil {
				t.Fatal(err)
			}
			served := srv.ProblemList()
			srv.Close()
			if !reflect.DeepEqual(checked, served) {
				t.Fatalf("check and serve disagree:\ncheck: %+v\nserve: %+v", checked, served)
			}
			worst := server.Severity("")
			for _, p := range checked {
				if p.Severity == server.SeverityError || worst == "" {
					worst = p.Severity
				}
			}
			if worst != c.want || !strings.Contains(problemText(checked), c.mention) {
				t.Fatalf("want %s naming %q, got %+v", c.want, c.mention, checked)
			}
			err = live.srv.Reload(cfg)
			var refused *server.ReloadRefused
			if refusedNow := errors.As(err, &refused); refusedNow != (c.want == server.SeverityError) {
				t.Fatalf("reload: %v, for a configuration whose worst problem is a %s", err, c.want)
			}
			if refused != nil && !strings.Contains(err.Error(), c.mention) {
				t.Errorf("the refusal does not say why: %v", err)
			}
		})
	}
}

// problemText joins problems' sentences.
func problemText(ps []server.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.What + "\n")
	}
	return b.String()
}
