package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer collects an operator log safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records parses every line as one JSON object, failing the test on a line
// that is not one.
func (b *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("an operator log line is not JSON: %v\n%s", err, line)
		}
		out = append(out, rec)
	}
	return out
}

// waitFor polls until the log holds text, or fails.
func (b *logBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the operator log never got %s:\n%s", text, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newLoggedHarness is newHarnessWith with a JSON operator log at debug.
func newLoggedHarness(t *testing.T, serverExtra, extra string) (*harness, *logBuffer) {
	t.Helper()
	buf := &logBuffer{}
	h := writeHarness(t, serverExtra, extra)
	h.logger = slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.start()
	return h, buf
}

// heldSecretTemplate is a gated apply that takes a secret answer and reads
// an env credential, both of which the provisioner prints.
const heldSecretTemplate = `
credential "cloud" {
  env = { CLOUD_KEY = "` + canaryCloud + `" }
}
template "held-secret" {
  project     = "infra"
  command     = "infra/secret"
  credentials = ["cloud"]
  survey "db_password" {
    type      = "string"
    sensitive = true
  }
}
rule "hold-all" {
  templates        = ["held-secret"]
  require_approval = true
}
`

// Launch, hold, a refused approval, approve: the JSON operator log has one
// record per transition of the run, in order, with its template, kind and
// requester; an approval record with the digest and the rule; a refusal
// with its reason; and no secret anywhere.
func TestOperatorLogOneRecordPerTransition(t *testing.T) {
	h, logs := newLoggedHarness(t, "", heldSecretTemplate)
	out, errOut, code := h.sshStdin("alice", toJSON(map[string]string{"db_password": canaryDB}), "launch", "held-secret", "--answers", "-", "--json")
	if code != 0 {
		t.Fatalf("launch: %d %s %s", code, out, errOut)
	}
	h.waitStatus("1", StatusAwaitingApproval)
	digest := h.show("bob", "1").Proposal.Digest
	if _, _, code := h.ssh("carol", "approve", "1", "--digest", digest); code == 0 {
		t.Fatal("carol, without the approve role, approved")
	}
	h.mustSSH("bob", "approve", "1", "--digest", digest)
	h.waitStatus("1", StatusSucceeded)
	logs.waitFor(t, `"msg":"run succeeded"`) // logged a moment after the store has it

	var got []string
	var approval, refusal map[string]any
	for _, rec := range logs.records(t) {
		switch msg, _ := rec["msg"].(string); {
		case strings.HasPrefix(msg, "run ") && rec["run"] == "1":
			got = append(got, rec["from"].(string)+">"+rec["status"].(string))
			for k, want := range map[string]string{"template": "held-secret", "kind": "apply", "requester": "alice", "requester_kind": "person"} {
				if rec[k] != want {
					t.Errorf("record %v: %s = %v, want %s", rec, k, rec[k], want)
				}
			}
			if _, ok := rec["duration_seconds"].(float64); !ok {
				t.Errorf("record %v has no duration_seconds", rec)
			}
		case msg == "approval":
			approval = rec
		case msg == "refusal":
			refusal = rec
		}
	}
	want := ">queued queued>running running>awaiting_approval awaiting_approval>queued queued>running running>succeeded"
	if strings.Join(got, " ") != want {
		t.Errorf("transition records:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if approval == nil || approval["digest"] != digest || approval["by"] != "bob" || !strings.Contains(toJSON(approval["rules"]), "hold-all") {
		t.Errorf("approval record %v, want bob releasing hold-all at %s", approval, digest)
	}
	if refusal == nil || refusal["identity"] != "carol" || refusal["command"] != "approve" || refusal["reason"] == "" {
		t.Errorf("refusal record %v, want carol's approve with a reason", refusal)
	}
	if found := leaks("operator log", []byte(logs.String()), []string{canaryDB, canaryCloud, canaryDerived()}); len(found) > 0 {
		t.Errorf("secrets in the operator log: %v", found)
	}
}

// A restart logs what recovery did: a held run is counted, and its
// transitions after the restart are still one record each.
func TestOperatorLogRecovery(t *testing.T) {
	h, logs := newLoggedHarness(t, "", dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	h.restart()
	h.mustSSH("bob", "reject", "1", "--reason", "not today")
	var recovery, rejection map[string]any
	rejected := 0
	for _, rec := range logs.records(t) {
		switch rec["msg"] {
		case "recovery: start":
			recovery = rec
		case "rejection":
			rejection = rec
		case "run rejected":
			rejected++
		}
	}
	if recovery == nil || recovery["held"] != float64(1) {
		t.Errorf("recovery record %v, want held 1", recovery)
	}
	if rejection == nil || rejection["reason"] != "not today" || !strings.HasPrefix(rejection["digest"].(string), "sha256:") || !strings.Contains(toJSON(rejection["rules"]), "everything") {
		t.Errorf("rejection record %v", rejection)
	}
	if rejected != 1 {
		t.Errorf("%d 'run rejected' records, want 1", rejected)
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// Promise (brief: "a secret inside a reject reason"): nothing secret in any
// operator log record ("the masker's rules apply"). Once, a reject reason
// quoting the run's sensitive answer reached the operator log in clear,
// because the log's scrubber knew the configuration's secrets only, not the
// run's answers.
func TestARejectReasonsSecretStaysOutOfTheOperatorLog(t *testing.T) {
	h, logs := newLoggedHarness(t, "", heldSecretTemplate)
	h.sshStdin("alice", toJSON(map[string]string{"db_password": canaryDB}), "launch", "held-secret", "--answers", "-")
	h.waitStatus("1", StatusAwaitingApproval)
	reason := "no: the db password " + canaryDB + " is the old one; also " + canaryCloud
	if _, errOut, code := h.ssh("bob", "reject", "1", "--reason", reason); code != 0 {
		t.Fatalf("reject: %d %s", code, errOut)
	}
	h.waitStatus("1", StatusRejected)
	logs.waitFor(t, `"msg":"rejection"`)
	if strings.Contains(logs.String(), canaryCloud) {
		t.Errorf("the credential value in a reject reason reached the operator log")
	}
	if found := leaks("operator log", []byte(logs.String()), []string{canaryDB}); len(found) > 0 {
		t.Errorf("BREAK: the run's sensitive answer, quoted in a reject reason, is in the operator log: %v", found)
	}
}

// Refusals of launches carrying a sensitive answer (given twice, with a
// required answer missing, with a control character) put neither the answer
// nor its quoted form in the operator log's refusal record.
func TestRefusalsKeepSensitiveAnswersOutOfTheOperatorLog(t *testing.T) {
	const canary = "Refusal-Canary-5512"
	h, logs := newLoggedHarness(t, "", secretDataTemplate)
	h.ssh("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary, "--var", "token="+canary+"x")
	h.ssh("alice", "launch", "data-secret", "--var", "token="+canary)
	h.ssh("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary+"\x01")
	h.ssh("carol", "launch", "data-secret", "--var", "instances=zz", "--var", "token="+canary)
	logs.waitFor(t, `got \"zz\"`)
	if n := strings.Count(logs.String(), `"msg":"refusal"`); n < 2 {
		t.Errorf("%d refusal records, want at least 2:\n%s", n, logs.String())
	}
	if found := leaks("operator log", []byte(logs.String()), []string{canary}); len(found) > 0 {
		t.Errorf("a sensitive answer in a refusal record: %v\n%s", found, logs.String())
	}
}
