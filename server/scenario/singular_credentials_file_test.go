package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// credentialProcess is an AWS credentials file whose profile p runs sh,
// touching marker, for its credentials.
func credentialProcess(marker string) string {
	return fmt.Sprintf("[p]\ncredential_process = sh -c \"touch %s; echo '{\\\"Version\\\":1,\\\"AccessKeyId\\\":\\\"a\\\",\\\"SecretAccessKey\\\":\\\"b\\\"}'\"\n", marker)
}

// s3Settings point an s3 backend at profile p of ./aws-credentials, under
// the singular spelling, and at a port nothing listens on.
const s3Settings = `
    bucket                      = "b"
    key                         = "k"
    region                      = "us-east-1"
    shared_credentials_file     = "./aws-credentials"
    profile                     = "p"
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
    max_retries                 = 1
    endpoints                   = { s3 = "http://127.0.0.1:1" }
`

// An exempted dry run whose terraform_remote_state names the s3 backend's
// singular shared_credentials_file is held at the scan stage for the
// exempting rule's approvers, and the file's credential_process does not
// run. The break it guards: the scan knew only the plural spelling, found
// nothing, and the plan ran the program as the server's user.
func TestExemptedDryRunIsHeldForARemoteStatesSingularCredentialsFile(t *testing.T) {
	t.Parallel()
	h := scanHarness(t, "template \"creds\" {\n  project = \"infra\"\n  command = \"infra/creds\"\n}\n")
	marker := filepath.Join(h.dir, "credential-process-ran")
	dir := filepath.Join(h.project, "infra/creds")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "aws-credentials"), []byte(credentialProcess(marker)), 0o644)
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte("data \"terraform_remote_state\" \"s\" {\n  backend = \"s3\"\n  config = {"+s3Settings+"  }\n}\n"), 0o644)
	v := h.launchWait("alice", "creds", "--dry-run")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the credential_process ran without a person (%s: %s; findings %+v)", v.Status, v.Message, v.Findings)
	}
	if v.Run.Status != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != store.StageScan || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("status %s (%s), steps %v; want held at the scan stage before any plan", v.Status, v.Message, stepNames(v))
	}
	if !slices.ContainsFunc(v.Findings, func(f store.Finding) bool {
		return f.Address == "data.terraform_remote_state.s" && f.File == "infra/creds/main.tf" && strings.Contains(f.Reason, "shared_credentials_file")
	}) {
		t.Fatalf("findings %+v; want the remote state named", v.Findings)
	}
	if b := h.show("bob", v.ID); !b.WaitingForYou || len(b.Holds) == 0 || b.Holds[0].Rule != "review" {
		t.Fatalf("bob is not asked to release the review hold: %+v", b.Holds)
	}
}

// A pull request whose root backend is the checkout's, word for word,
// naming ./aws-credentials under the singular spelling, while the branch
// changes that file to run a credential_process: the plan is refused
// before init, naming the backend, and the program does not run. The
// break it guards: only the backend block's text was compared with the
// checkout's, and init read the branch's credentials file.
func TestPullRequestIsRefusedForACredentialsFileItsRootBackendNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	marker := filepath.Join(h.dir, "credential-process-ran")
	data := filepath.Join(h.project, "infra/data")
	os.WriteFile(filepath.Join(data, "backend.tf"), []byte("terraform {\n  backend \"s3\" {"+s3Settings+"  }\n}\n"), 0o644)
	os.WriteFile(filepath.Join(data, "aws-credentials"), []byte("[p]\naws_access_key_id = a\naws_secret_access_key = b\n"), 0o644)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "creds")
	os.WriteFile(filepath.Join(data, "aws-credentials"), []byte(credentialProcess(marker)), 0o644)
	h.git("commit", "-q", "-am", "credentials")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "creds")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("a pull request ran the credential_process of the file its backend names (%s: %s; steps %v)", v.Status, v.Message, stepNames(v))
	}
	if v.Run.Status != store.StatusRefused || len(v.Steps) != 0 || !strings.Contains(v.Message, "terraform.backend.s3") {
		t.Fatalf("status %s (%s), steps %v; want refused naming the backend before any tofu process", v.Status, v.Message, stepNames(v))
	}
	if !slices.ContainsFunc(v.Findings, func(f store.Finding) bool {
		return f.Address == "terraform.backend.s3" && f.File == "infra/data/backend.tf" && strings.Contains(f.Reason, "shared_credentials_file")
	}) {
		t.Fatalf("findings %+v; want the backend named", v.Findings)
	}
}

// A pull request that adds a terraform_remote_state naming the s3
// backend's singular shared_credentials_file, and the file with a
// credential_process, is refused before any tofu process, the finding
// saying which file, and the program does not run.
func TestPullRequestIsRefusedForARemoteStatesSingularCredentialsFile(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	marker := filepath.Join(h.dir, "credential-process-ran")
	data := filepath.Join(h.project, "infra/data")
	h.git("checkout", "-q", "-b", "rs")
	os.WriteFile(filepath.Join(data, "aws-credentials"), []byte(credentialProcess(marker)), 0o644)
	os.WriteFile(filepath.Join(data, "remote.tofu"), []byte("data \"terraform_remote_state\" \"s\" {\n  backend = \"s3\"\n  config = {"+s3Settings+"  }\n}\n"), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "remote state")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "rs")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("a pull request ran the credential_process of its remote state (%s: %s)", v.Status, v.Message)
	}
	if v.Run.Status != store.StatusRefused || len(v.Steps) != 0 || !slices.ContainsFunc(v.Findings, func(f store.Finding) bool {
		return f.Address == "data.terraform_remote_state.s" && f.File == "infra/data/remote.tofu" && strings.Contains(f.Reason, "shared_credentials_file")
	}) {
		t.Fatalf("status %s (%s), steps %v, findings %+v; want refused before any tofu process, naming the file", v.Status, v.Message, stepNames(v), v.Findings)
	}
}
