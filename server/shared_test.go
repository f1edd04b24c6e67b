package server

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/tui"
)

// mcpConn is an MCP client session over `ssh … mcp` (testkit.MCPConn).
type mcpConn = testkit.MCPConn

// mcpAs connects an MCP client to `ssh … mcp` with user's key; version, if
// given, is the protocol version the client asks for.
func (h *harness) mcpAs(user string, version ...string) *mcpConn {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatalf("ssh %s: %v", user, err)
	}
	return testkit.DialMCP(h.t, client, user, version...)
}

// showRaw is `show --json` of run id as user sees it, decoded as a map.
func (h *harness) showRaw(user, id string) map[string]any {
	h.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(h.mustSSH(user, "show", id, "--json")), &m); err != nil {
		h.t.Fatal(err)
	}
	return m
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	testkit.MustContain(t, what, text, wants...)
}

func mustLack(t *testing.T, what, text string, unwanted ...string) {
	t.Helper()
	testkit.MustLack(t, what, text, unwanted...)
}

// consoleAs is the console backend of who on h's server.
func consoleAs(h *harness, who Identity) *console { return newConsole(h.srv, who) }

// consoleRun is run id's detail as c shows it; it fails the test on error.
func consoleRun(t *testing.T, c *console, id string) tui.RunDetail {
	t.Helper()
	return testkit.ConsoleRun(t, c, id)
}

// sshStdin runs one command over a real SSH connection with stdin as its
// standard input.
func (h *harness) sshStdin(user, stdin string, args ...string) (string, string, int) {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatal(err)
	}
	defer client.Close()
	return testkit.SSHStdin(h.t, client, stdin, args...)
}

// reloadWith appends extra to the harness's configuration file, loads it and
// reloads the server with it.
func (h *harness) reloadWith(extra string) {
	h.t.Helper()
	f, err := os.OpenFile(h.cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := f.WriteString(extra); err != nil {
		h.t.Fatal(err)
	}
	f.Close()
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		h.t.Fatalf("loading the changed configuration: %v", err)
	}
	h.srv.Reload(cfg)
}

// git runs git in the harness's project (as user t).
func (h *harness) git(args ...string) string {
	h.t.Helper()
	cmd := osexec.Command("git", append([]string{"-C", h.project, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// prHarness is a server whose checkout is a git repository with a branch
// "evil" that adds an external data source to infra/data and a branch
// "clean" that adds a resource.
func prHarness(t *testing.T) *harness {
	h := newHarness(t, dataTemplates)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "evil")
	evil := fmt.Sprintf("data \"external\" \"steal\" {\n  program = [\"sh\", \"-c\", \"env > %s; echo {}\"]\n}\n", filepath.Join(h.dir, "stolen"))
	os.WriteFile(filepath.Join(h.project, "infra/data/evil.tf"), []byte(evil), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "evil")
	h.git("checkout", "-q", "main")
	h.git("checkout", "-q", "-b", "clean")
	os.WriteFile(filepath.Join(h.project, "infra/data/extra.tf"), []byte("resource \"terraform_data\" \"extra\" {\n  input = \"from the branch\"\n}\n"), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "one more")
	h.git("checkout", "-q", "main")
	return h
}

// writeFiles writes files (name -> text; "" removes it, "symlink:T"
// makes a symbolic link to T) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testkit.WriteFiles(t, dir, files)
}

func kubeconfigExec(marker string) string { return testkit.KubeconfigExec(marker) }

const (
	remoteStateKube = testkit.RemoteStateKube
	plainResource   = testkit.PlainResource
)
