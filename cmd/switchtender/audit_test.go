package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The audit trail of a real server, read offline: verify passes, export
// shows the approval with its digest and the rule it released; after one
// byte of one entry changes in the bbolt file, verify exits 1 naming it.
func TestAuditVerifyAndExport(t *testing.T) {
	n := newNode(t)
	n.mustSSH("alice", "launch", "data", "--var", "instances=1", "--wait")
	held := n.show("1")
	n.mustSSH("bob", "approve", "1", "--digest", held.Proposal.Digest)
	n.waitStatus("1", "succeeded", "failed", "stale")
	n.kill()

	out, err := exec.Command(binary, "audit", "verify", "--config", n.cfgPath).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "audit trail verified") {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, "audit", "export", "--config", n.cfgPath).Output()
	if err != nil {
		t.Fatal(err)
	}
	var approval map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var e map[string]any
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if e["action"] == "approve" {
			approval = e
		}
	}
	if approval == nil || !strings.Contains(approval["detail"].(string), held.Proposal.Digest) ||
		!strings.Contains(approval["detail"].(string), "everything") || approval["hash"] == "" {
		t.Fatalf("no approval with its digest and rule in the export:\n%s", out)
	}

	db, err := bolt.Open(filepath.Join(n.data, "switchtender.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("audit_chain"))
		k2, v2 := b.Cursor().Last()
		changed := bytes.Replace(append([]byte{}, v2...), []byte(`"actor":"`), []byte(`"actor":"X`), 1)
		return b.Put(append([]byte{}, k2...), changed)
	})
	db.Close()
	out, err = exec.Command(binary, "audit", "verify", "--config", n.cfgPath).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "does not verify at entry") {
		t.Fatalf("audit verify after tampering: %v\n%s", err, out)
	}
}

// check: a configuration with a broken working directory and a hostile
// one exit 1 with the reason; a good one exits 0. Nothing is opened or run.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hcl")
	os.WriteFile(good, []byte("server {\n  data_dir = \""+filepath.Join(dir, "data")+"\"\n}\nproject \"p\" {\n  path = \""+dir+"\"\n}\ntemplate \"t\" {\n  project = \"p\"\n  command = \".\"\n}\n"), 0o600)
	cmd := exec.Command(binary, "check", "--config", good)
	cmd.Env = serverEnv
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "every plan_gate compiles") {
		t.Errorf("good config: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("check created the data directory")
	}
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("project \"p\" {\n  path = \""+dir+"\"\n}\ntemplate \"t\" {\n  project = \"p\"\n  command = \"nosuch\"\n}\n"), 0o600)
	cmd = exec.Command(binary, "check", "--config", bad)
	cmd.Env = serverEnv
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "template t") {
		t.Errorf("bad config: %v\n%s", err, out)
	}
	deep := filepath.Join(dir, "deep.hcl")
	os.WriteFile(deep, []byte("server {\n  max_parallel = "+strings.Repeat("[", 100000)+"\n}\n"), 0o600)
	out, err = exec.Command(binary, "check", "--config", deep).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "deep.hcl:2,") {
		t.Errorf("deep config: %v\n%s", err, out)
	}
}
