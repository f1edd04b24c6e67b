package scenario

// A pull request's plan cannot print the server's keys, a worker's keys or
// the secrets its configuration file holds, whatever the branch reads with
// file().

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// Promise (docs/pull-requests.md: a branch is scanned and planned in a
// private tree, and nothing it holds runs code; no secret leaks to logs or
// show). Once, a branch whose resource read file("<data_dir>/seal.key")
// printed the server's sealing key, and the SSH host key, into its plan log
// for anyone who could read the run.
func TestAPullRequestCannotPrintTheSealKey(t *testing.T) {
	t.Parallel()
	var dataDir string
	var hh *harness
	v := planBranchWith(t, map[string]string{"main.tf": testkit.PlainResource}, func(h *harness, wd string) {
		hh = h
		dataDir = filepath.Join(h.dir, "data")
		testkit.WriteFiles(t, wd, map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = file(\"" +
			filepath.Join(dataDir, "seal.key") + "\")\n}\n"})
	})
	key, err := os.ReadFile(filepath.Join(dataDir, "seal.key"))
	if err != nil {
		t.Fatal(err)
	}
	var identity string
	for _, line := range strings.Split(string(key), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-") {
			identity = line
		}
	}
	if identity == "" {
		t.Fatalf("no identity line in the seal key:\n%s", key)
	}
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if log := hh.mustSSH("alice", "log", v.ID); strings.Contains(log, identity) {
		t.Fatalf("a branch's file() put the server's sealing key into its pull request's plan log (%s):\n%.1200s", v.Status, log)
	}
}

// The same on a relay worker: a branch's file() reads the pool's delivery
// identity (which opens the sealed payload, credentials and secret
// answers, of every run of the pool) and the worker's own SSH key, and
// its pull request's plan prints both into the run's log on the control
// node.
func TestAPullRequestCannotPrintAWorkersKeys(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	git := testkit.GitIn(t, checkout)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "peek")
	testkit.WriteFiles(t, filepath.Join(checkout, "infra/data"), map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n" +
		"  input = [file(\"" + w1.DeliveryIdentity + "\"), file(\"" + w1.Key + "\")]\n}\n"})
	git("add", "-A")
	git("commit", "-q", "-m", "peek")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rpr", "--dry-run", "--ref", "peek")
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	delivery, _ := os.ReadFile(w1.DeliveryIdentity)
	for _, line := range strings.Split(string(delivery), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-") && strings.Contains(log, line) {
			t.Errorf("a branch's file() put pool eu's delivery identity into the plan log")
		}
	}
	if strings.Contains(log, "OPENSSH PRIVATE KEY") {
		t.Errorf("a branch's file() put worker w1's SSH private key into the plan log")
	}
}

// Promise (docs/pull-requests.md: "Switchtender's own keys are masked
// in every run's log"; ownkeys.go: "so a configuration that reads one with
// file() cannot print it"). Once, a branch that printed
// lower(file("<data_dir>/seal.key")) got the sealing key into its plan log,
// since the bech32 key is case-insensitive and the masker knew only the
// file's own spelling.
func TestAPullRequestCannotPrintTheSealKeyLowercased(t *testing.T) {
	t.Parallel()
	var sealKey string
	h, v := planBranchOf(t, func(h *harness) map[string]string {
		sealKey = filepath.Join(h.dir, "data", "seal.key")
		return map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = lower(file(\"" + sealKey + "\"))\n}\n"}
	})
	key, err := os.ReadFile(sealKey)
	if err != nil {
		t.Fatal(err)
	}
	identity := ""
	for _, line := range strings.Split(string(key), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-1") {
			identity = line
		}
	}
	if identity == "" {
		t.Fatalf("no identity in the seal key")
	}
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if strings.Contains(log, strings.ToLower(identity)) {
		t.Fatalf("a branch's lower(file()) put the server's sealing key into its pull request's plan log (%s):\n%.900s", v.Status, log)
	}
}

// Promise (docs/pull-requests.md: the branch's plan runs with the
// checkout's credentials, its own keys are masked; server/oplog NewScrubber knows
// every static secret of the configuration, for the operator log). Once, a
// branch whose resource read file() of the server's configuration file
// printed another template's static production secret in clear into its plan
// log.
func TestAPullRequestCannotPrintTheConfigurationsSecrets(t *testing.T) {
	t.Parallel()
	h, v := planBranchOf(t, func(h *harness) map[string]string {
		return map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = file(\"" + h.cfgPath + "\")\n}\n"}
	})
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if strings.Contains(log, "prod-aws-secret-13f-Zq8v") {
		i := strings.Index(log, "prod-aws-secret-13f-Zq8v")
		t.Fatalf("a branch's file() of the configuration file put template prod13f's AWS_SECRET_ACCESS_KEY into its pull request's plan log (%s): …%s…",
			v.Status, log[max(0, i-120):min(len(log), i+60)])
	}
}

// Promise (0ecae4d; docs/pull-requests.md: "a pull request's plan also
// masks every secret the configuration file holds in clear"; ownkeys.go
// maskConfigSecrets: "every secret the configuration holds in clear", because
// "a branch's file() of the configuration file would show them"). Once, a
// sensitive survey field's default held in the configuration file was printed
// by a pull request's file() of that file, since the configuration's masked
// secrets left survey defaults out.
func TestAPullRequestCannotPrintASensitiveDefault(t *testing.T) {
	t.Parallel()
	const secret = "prod-db-default-13g-Wq7"
	h := writeHarness(t, "", fileReadingPRConfig+`
template "db13g" {
  project = "infra"
  command = "infra/network"
  survey "db_password" {
    type      = "string"
    sensitive = true
    default   = "`+secret+`"
  }
}
`)
	wd := filepath.Join(h.project, "infra/pr13f")
	testkit.WriteFiles(t, wd, map[string]string{"main.tf": testkit.PlainResource})
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	testkit.WriteFiles(t, wd, map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = file(\"" + h.cfgPath + "\")\n}\n"})
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "pr13f", "--dry-run", "--ref", "pr")
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if strings.Contains(log, "prod-aws-secret-13f-Zq8v") {
		t.Errorf("the credential's env value is in the log (13f's break is back)")
	}
	if i := strings.Index(log, secret); i >= 0 {
		t.Fatalf("a branch's file() of the configuration file put template db13g's sensitive default into its pull request's plan log (%s): …%s…",
			v.Status, log[max(0, i-100):min(len(log), i+40)])
	}
}

// fileReadingPRConfig is a pull-request template on the control node's own
// queue, next to a production template whose static credential lives, as
// the README's example has it, in the configuration file.
const fileReadingPRConfig = `
credential "prod13f" {
  env = { AWS_SECRET_ACCESS_KEY = "prod-aws-secret-13f-Zq8v" }
}
template "prod13f" {
  project     = "infra"
  command     = "infra/network"
  credentials = ["prod13f"]
  survey "region" { type = "string" }
}
template "pr13f" {
  project = "infra"
  command = "infra/pr13f"
}
`
