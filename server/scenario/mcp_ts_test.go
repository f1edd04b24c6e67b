package scenario

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
	gossh "golang.org/x/crypto/ssh"
)

// mcpTSDir holds the TypeScript client of the cross-implementation check;
// `npm ci` there installs the official TypeScript MCP SDK.
const mcpTSDir = testdata + "/mcp-ts"

// The cross-implementation check: the official TypeScript MCP SDK's client,
// spawning the real OpenSSH client `ssh … mcp` over stdio as an MCP client
// configured with {"command": "ssh", ...} does, works with the server: an
// agent's dry run is held before planning, a person releases it over SSH, the
// client hears of it through resources/updated, reads the masked log; an
// agent's apply is held and no tool releases it; a person's key cannot
// approve over MCP. The Go tests (mcp_test.go) are the authoritative ones;
// this one skips when node, ssh or the installed SDK is missing (it never
// fetches anything itself).
func TestMCPTypeScriptClient(t *testing.T) {
	t.Parallel()
	node := mcpTSPrerequisites(t)
	agentKey, agentPub := writeTestKey(t, "ts-agent")
	personKey, personPub := writeTestKey(t, "ts-person")
	h := newHarness(t, networkTemplate+fmt.Sprintf("agent \"ts-bot\" {\n  public_key = %q\n}\nuser \"ts-person\" {\n  public_key = %q\n  roles = [\"launch\", \"approve\"]\n}\n", agentPub, personPub))

	out := runTSClient(t, h, node, "agent", agentKey, func(line string) {
		if id, ok := strings.CutPrefix(line, "HELD "); ok {
			h.mustSSH("bob", "approve", id, "--digest", h.show("bob", id).Proposal.Digest)
		}
	})
	for _, want := range []string{"OK initialize switchtender", "OK tools cancel_run,launch,list_runs,list_templates,list_workers,read_log,reconcile,rerun,show_run",
		"OK notified: run 1 succeeded", "OK apply 2 held before planning; no tool released it", "OK done"} {
		if !strings.Contains(out, want) {
			t.Errorf("the TypeScript client's agent check lacks %q:\n%s", want, out)
		}
	}
	t.Logf("agent:\n%s", out)
	out = runTSClient(t, h, node, "person", personKey, nil)
	t.Logf("person:\n%s", out)
	if !strings.Contains(out, "OK person cannot approve over MCP") || !strings.Contains(out, "OK done") {
		t.Errorf("the TypeScript client's person check:\n%s", out)
	}
	if r, err := h.db().GetRun("2"); err != nil || store.Status(r.Status) != store.StatusAwaitingApproval || len(r.Approvals) != 0 {
		t.Errorf("run 2 after the TypeScript client: %s %+v %v", r.Status, r.Approvals, err)
	}
}

// mcpTSPrerequisites returns node's path, or skips the test saying what is
// missing and how to get it.
func mcpTSPrerequisites(t *testing.T) string {
	t.Helper()
	node, err := osexec.LookPath("node")
	if err != nil {
		t.Skip("skipping the TypeScript MCP client check: node is not installed (docs/mcp.md)")
	}
	if _, err := osexec.LookPath("ssh"); err != nil {
		t.Skip("skipping the TypeScript MCP client check: the OpenSSH client ssh is not installed")
	}
	if _, err := os.Stat(filepath.Join(mcpTSDir, "node_modules/@modelcontextprotocol/sdk/package.json")); err != nil {
		t.Skip("skipping the TypeScript MCP client check: the TypeScript MCP SDK is not installed; run `npm ci` in server/testdata/mcp-ts once (it needs the npm registry; docs/mcp.md)")
	}
	return node
}

// writeTestKey writes a new ed25519 private key for OpenSSH to a file and
// returns the file and the public key's authorized_keys line.
func writeTestKey(t *testing.T, name string) (file, pub string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))
}

// runTSClient runs client.mjs in mode with ssh connecting with key, hands
// each line it prints to onLine (when not nil), and returns its output; a
// failure or a run longer than three minutes fails the test.
func runTSClient(t *testing.T, h *harness, node, mode, key string, onLine func(string)) string {
	t.Helper()
	host, port, err := net.SplitHostPort(h.addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, node, "client.mjs", mode,
		"-F", "/dev/null", "-p", port, "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", host, "mcp")
	cmd.Dir = mcpTSDir
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if onLine != nil {
			onLine(line)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the TypeScript client (%s) failed: %v\nstdout:\n%s\nstderr:\n%s", mode, err, out.String(), stderr.String())
	}
	return out.String()
}
