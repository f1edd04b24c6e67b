package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	gossh "golang.org/x/crypto/ssh"
)

// sshNoFatal is node.ssh that reports a dropped connection as exit -1
// instead of failing the test, so what the server did can be looked at.
func (n *node) sshNoFatal(user string, args ...string) (string, string, int) {
	client, err := gossh.Dial("tcp", n.addr, &gossh.ClientConfig{
		User:            user,
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(n.keys[user])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
	if err != nil {
		return "", err.Error(), -1
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", err.Error(), -1
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	var quoted []string
	for _, a := range args {
		quoted = append(quoted, shq(a))
	}
	done := make(chan error, 1)
	go func() { done <- sess.Run(strings.Join(quoted, " ")) }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		return out.String(), "timed out", -2
	}
	if err != nil {
		var ee *gossh.ExitError
		if !errors.As(err, &ee) {
			return out.String(), errOut.String() + err.Error(), -1
		}
		return out.String(), errOut.String(), ee.ExitStatus()
	}
	return out.String(), errOut.String(), 0
}

// runCheck runs `switchtender check --config cfg` bounded in time and
// returns its combined output and exit code.
func runCheck(t *testing.T, cfg string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "check", "--config", cfg)
	cmd.Env = serverEnv
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("check: %v", err)
	}
	if len(out) > 600 {
		out = append(out[:600], "…"...)
	}
	return string(out), code
}

// The nesting bound counts brackets only; a unary operator nests the HCL
// parser one level per character with no bracket at all. A 4 MiB file of
// `!!!…!true` (1,000,000 levels, under MaxFileSize) must be refused with
// file:line and exit 1. Once, it killed `check` with "fatal error: stack
// overflow".
func TestCheckRefusesUnaryNesting(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "unary.hcl")
	src := "server {\n  allow_self_approval = " + strings.Repeat("!", 1_000_000) + "true\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, cfg)
	if code != 1 || strings.Contains(out, "fatal error") || !strings.Contains(out, "unary.hcl:2") {
		t.Fatalf("check on 1,000,000 nested `!`: exit %d, want 1 with unary.hcl:2\n%s", code, out)
	}
}

// The nesting bound counts 200,000 real levels of parentheses as such when a
// `# )` comment follows each `(`. Once, it clamped at zero on a closing
// bracket and counted brackets inside comments and strings, so it saw
// depth 1.
func TestCheckCountsNestingHiddenByComments(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hidden.hcl")
	const levels = 200_000
	src := "server {\n  max_parallel = " + strings.Repeat("(\n# )\n", levels) + "1" + strings.Repeat(")", levels) + "\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, cfg)
	if code != 1 || strings.Contains(out, "fatal error") || !strings.Contains(out, "hidden.hcl:") {
		t.Fatalf("check on %d parentheses hidden by comments: exit %d, want 1 with file:line\n%s", levels, code, out)
	}
}

// Same with strings: `("a)" + ("a)" + …` is counted at its real depth. Once,
// it kept the counted depth at 1.
func TestCheckCountsNestingHiddenByStrings(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strings.hcl")
	const levels = 200_000
	src := "template \"t\" {\n  project = \"p\"\n  command = \".\"\n  vars = { a = " + strings.Repeat(`("a)" + `, levels) + `"z"` + strings.Repeat(")", levels) + " }\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, cfg)
	if code != 1 || strings.Contains(out, "fatal error") || !strings.Contains(out, "strings.hcl:") {
		t.Fatalf("check on %d parentheses hidden by strings: exit %d, want 1 with file:line\n%s", levels, code, out)
	}
}

// alive reports whether the node's server process is still running.
func (n *node) alive() bool {
	select {
	case err := <-n.exited:
		n.exited <- err
		return false
	default:
		return true
	}
}

// A file in the checkout is read at launch (the check for sensitive
// variables) by hclparse after gate.CheckNesting, which has the same two
// holes. A launcher who can commit to the checkout writes main-bomb.tf with
// 1,000,000 `!`; `launch` must be answered (fail closed or refused) and the
// server keep serving. Once, the whole server died with a stack overflow.
func TestUnaryNestingInTheCheckoutDoesNotKillTheServer(t *testing.T) {
	n := newNode(t)
	bomb := "variable \"x\" {\n  sensitive = " + strings.Repeat("!", 1_000_000) + "true\n}\n"
	if err := os.WriteFile(filepath.Join(n.project, "infra", "data", "bomb.tf"), []byte(bomb), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := n.sshNoFatal("alice", "launch", "data", "--dry-run")
	t.Logf("launch: exit %d\n%s\n%s", code, out, errOut)
	time.Sleep(time.Second)
	if !n.alive() {
		b, _ := os.ReadFile(n.logPath)
		if i := strings.Index(string(b), "fatal error"); i >= 0 {
			b = b[i:min(len(b), i+200)]
		}
		t.Fatalf("the server died on `launch` of a checkout with 1,000,000 nested `!`:\n%s", b)
	}
	n.mustSSH("alice", "runs")
}

// The JSON form: `[ "]", [ "]", …` is counted at its real depth. Once, it
// kept CheckNesting's depth at 1 while the JSON parser recursed 300,000
// levels.
func TestJSONNestingInTheCheckoutDoesNotKillTheServer(t *testing.T) {
	n := newNode(t)
	const levels = 300_000
	bomb := `{"locals": {"a": ` + strings.Repeat(`["]", `, levels) + "1" + strings.Repeat("]", levels) + "}}\n"
	if err := os.WriteFile(filepath.Join(n.project, "infra", "data", "bomb.tf.json"), []byte(bomb), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := n.sshNoFatal("alice", "launch", "data", "--dry-run")
	t.Logf("launch: exit %d\n%s\n%s", code, out, errOut)
	time.Sleep(time.Second)
	if !n.alive() {
		b, _ := os.ReadFile(n.logPath)
		if i := strings.Index(string(b), "fatal error"); i >= 0 {
			b = b[i:min(len(b), i+200)]
		}
		t.Fatalf("the server died on `launch` of a checkout with a %d-deep .tf.json:\n%s", levels, b)
	}
	n.mustSSH("alice", "runs")
}

// `audit verify` while the server runs: the store is locked; it must end
// promptly with a sentence saying to stop the server.
func TestAuditVerifyWhileServingEndsPromptly(t *testing.T) {
	n := newNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, binary, "audit", "verify", "--config", n.cfgPath).CombinedOutput()
	t.Logf("audit verify while serving: %v after %v\n%s", err, time.Since(start).Round(time.Millisecond), out)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || ctx.Err() != nil || !strings.Contains(string(out), "stop the server") {
		t.Fatalf("audit verify while the server runs: %v\n%s", err, out)
	}
	n.mustSSH("alice", "runs")
}

// A changed byte anywhere in any entry is detected (the spec), even by
// whoever can write the bbolt file and recompute the hashes after it. Once,
// the chain hash was plain sha256(prev || entry) with no key and no anchor
// kept outside the store, so `audit verify` said a rewritten trail verified.
func TestARewrittenAuditChainIsCaughtByItsAnchor(t *testing.T) {
	n := newNode(t)
	n.mustSSH("alice", "launch", "data", "--var", "instances=1", "--wait")
	held := n.show("1")
	n.mustSSH("bob", "approve", "1", "--digest", held.Proposal.Digest)
	n.waitStatus("1", "succeeded", "failed", "stale")
	n.kill()
	// The operator kept the head from a verify (or the server log) outside
	// the machine: a chain rewritten with every hash recomputed has no entry
	// with that hash any more. Without the anchor, the rewrite is
	// undetectable from the store alone (README, the audit row).
	kept, err := exec.Command(binary, "audit", "verify", "--config", n.cfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("audit verify before the rewrite: %v\n%s", err, kept)
	}
	_, after, _ := bytes.Cut(kept, []byte("hash "))
	head := string(bytes.Fields(after)[0])

	db, err := bolt.Open(filepath.Join(n.data, "switchtender.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("audit_chain"))
		prev := ""
		type kv struct{ k, v []byte }
		var all []kv
		b.ForEach(func(k, v []byte) error {
			all = append(all, kv{append([]byte{}, k...), append([]byte{}, v...)})
			return nil
		})
		for _, e := range all {
			_, payload, _ := bytes.Cut(e.v, []byte("\n"))
			if bytes.Contains(payload, []byte(`"action":"approve"`)) {
				payload = bytes.Replace(payload, []byte(`"actor":"bob"`), []byte(`"actor":"eve"`), 1)
				changed = true
			}
			sum := sha256.Sum256(append([]byte(prev), payload...))
			h := hex.EncodeToString(sum[:])
			if err := b.Put(e.k, append([]byte(h+"\n"), payload...)); err != nil {
				return err
			}
			prev = h
		}
		return nil
	})
	db.Close()
	if err != nil || !changed {
		t.Fatalf("rewriting the chain: %v (approval found: %v)", err, changed)
	}
	out, err := exec.Command(binary, "audit", "verify", "--config", n.cfgPath, "--head", head).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "were rewritten or removed") {
		t.Fatalf("the approval's actor was changed to eve and the chain recomputed; audit verify --head passes:\n%s", out)
	}
}
