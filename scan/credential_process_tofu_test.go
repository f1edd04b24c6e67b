package scan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// credentialProcessFile is an AWS credentials file whose profile p runs sh
// (touching marker) for its credentials.
func credentialProcessFile(marker string) string {
	return fmt.Sprintf("[p]\ncredential_process = sh -c \"touch %s; echo '{\\\"Version\\\":1,\\\"AccessKeyId\\\":\\\"a\\\",\\\"SecretAccessKey\\\":\\\"b\\\"}'\"\n", marker)
}

// planOutput runs tofu init and plan in dir with HOME there and no AWS_*
// variables from the machine, and returns plan's output (plan fails:
// nothing listens where the backend points).
func planOutput(t *testing.T, dir string) string {
	t.Helper()
	bin, err := tofuBinary()
	if err != nil {
		t.Fatalf("these tests need OpenTofu: %v", err)
	}
	var out strings.Builder
	for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir}
		for _, kv := range tofuEnv() {
			if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		b, err := cmd.CombinedOutput()
		cancel()
		fmt.Fprintf(&out, "tofu %s: %v\n%s", args[0], err, b)
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("tofu %s: %v", args[0], err)
		}
	}
	return out.String()
}

// TestTofuRunsTheCredentialProcessOfEverySpellingItAccepts plans, with the
// pinned OpenTofu, a terraform_remote_state whose s3 backend names a
// credentials file with a credential_process, under each spelling: those
// OpenTofu accepts run the program at plan and are findings; the one it
// refuses (another case) runs nothing and is none. The break it guards:
// the singular shared_credentials_file was no finding, and its program
// ran at plan as the server's user.
func TestTofuRunsTheCredentialProcessOfEverySpellingItAccepts(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		file, src string
		runs      bool
	}{
		"singular":          {"main.tf", s3RemoteState("shared_credentials_file"), true},
		"plural":            {"main.tf", strings.Replace(s3RemoteState("shared_credentials_files"), `"./aws-credentials"`, `["./aws-credentials"]`, 1), true},
		"json template key": {"main.tf.json", `{"data": {"terraform_remote_state": {"s": {"backend": "s3", "config": {"bucket": "b", "key": "k", "region": "us-east-1", "${\"shared_credentials\"}_file": "./aws-credentials", "profile": "p", "skip_credentials_validation": true, "skip_requesting_account_id": true, "skip_metadata_api_check": true, "skip_region_validation": true, "max_retries": 1, "endpoints": {"s3": "http://127.0.0.1:1"}}}}}}`, true},
		"another case":      {"main.tf", s3RemoteState("Shared_Credentials_File"), false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marker := filepath.Join(dir, "credential-process-ran")
			if err := os.WriteFile(filepath.Join(dir, "aws-credentials"), []byte(credentialProcessFile(marker)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			found := len(scanTree(t, dir).Findings) > 0
			out := planOutput(t, dir)
			_, err := os.Stat(marker)
			if ran := err == nil; ran != tc.runs {
				t.Fatalf("the credential_process ran: %v, want %v\n%s", ran, tc.runs, out)
			}
			if !tc.runs && !strings.Contains(out, "Invalid backend configuration") {
				t.Errorf("OpenTofu did not refuse the spelling:\n%s", out)
			}
			if found != tc.runs {
				t.Errorf("the scan found something: %v; the program ran: %v", found, tc.runs)
			}
		})
	}
}
