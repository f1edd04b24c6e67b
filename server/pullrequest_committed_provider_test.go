package server

// A pull request's committed provider never runs; the test gives the
// server's runs a CLI configuration after start, an internal of Server.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// Promise (docs/scan.md step 1) Once, a branch that
// committed a provider under .terraform with a matching lock file had its
// plan run that provider, the branch's own program, with the server's
// credentials.
func TestAPullRequestNeverRunsACommittedProvider(t *testing.T) {
	h := prHarness(t)
	marker := filepath.Join(h.dir, "provider-ran")
	h.git("checkout", "-q", "-b", "prov")
	wd := filepath.Join(h.project, "infra/data")
	pkg := filepath.Join(wd, ".terraform/providers/registry.opentofu.org/hashicorp/null/3.2.2/linux_amd64")
	hash := writeFakeProvider(t, pkg, marker)
	os.WriteFile(filepath.Join(wd, "prov.tf"), []byte(nullProviderConfig), 0o644)
	os.WriteFile(filepath.Join(wd, ".terraform.lock.hcl"), []byte(lockFor(hash)), 0o644)
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "prov")
	h.git("checkout", "-q", "main")
	os.RemoveAll(filepath.Join(wd, ".terraform"))

	// The server's own provider source: a filesystem mirror that has
	// hashicorp/null 3.2.2 (a team's mirror or cache), so init can resolve
	// the version offline, as it would online from the registry.
	mirror := filepath.Join(h.dir, "mirror")
	writeFakeProvider(t, filepath.Join(mirror, "registry.opentofu.org/hashicorp/null/3.2.2/linux_amd64"), filepath.Join(h.dir, "mirror-provider-ran"))
	cli := filepath.Join(h.dir, "tofurc")
	os.WriteFile(cli, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)), 0o644)
	h.srv.env = append(append([]string{}, h.srv.env...), "TF_CLI_CONFIG_FILE="+cli)

	v := h.launchWait("alice", "data", "--dry-run", "--ref", "prov")
	log := h.mustSSH("bob", "log", v.ID)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the pull request's committed provider ran during its plan: %s (%s), steps %v\n%s", v.Status, v.Message, stepNames(v), log)
	}
	t.Logf("%s (%s) steps %v\n%s", v.Status, v.Message, stepNames(v), log)
}

func writeFakeProvider(t *testing.T, pkgDir, marker string) string {
	return testkit.WriteFakeProvider(t, pkgDir, marker)
}

func lockFor(hash string) string { return testkit.LockFor(hash) }

const nullProviderConfig = testkit.NullProviderConfig
