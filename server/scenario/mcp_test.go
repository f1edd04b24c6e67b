package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// These tests drive `ssh … mcp` with the official Go SDK's client over a
// real SSH connection: the session's stdin and stdout are its transport.

// mcpTools are the tools every identity gets, in the order listed.
var mcpTools = []string{"cancel_run", "launch", "list_runs", "list_templates", "list_workers", "read_log", "reconcile", "rerun", "show_run"}

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

// noReleaseTool fails the test if any tool's name speaks of releasing.
func noReleaseTool(t *testing.T, who string, names []string) {
	t.Helper()
	for _, n := range names {
		for _, bad := range []string{"approve", "reject", "release", "confirm"} {
			if strings.Contains(n, bad) {
				t.Errorf("%s is offered tool %s", who, n)
			}
		}
	}
	if !slices.Equal(names, mcpTools) {
		t.Errorf("%s's tools = %v, want %v", who, names, mcpTools)
	}
}

// An agent, over MCP, launches a dry run: it is held before planning (no
// exemption); a person releases it over SSH; the agent learns of it through
// resources/updated, reads the result, and reads the masked log. The
// launch is audited with the agent's name.
func TestMCPAgentDryRunNotified(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	c := h.mcpAs("deploy-bot")
	ir := c.Session.InitializeResult()
	if ir.ServerInfo.Name != "switchtender" || ir.Capabilities.Tools == nil || ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe {
		t.Fatalf("initialize: %+v %+v", ir.ServerInfo, ir.Capabilities)
	}
	noReleaseTool(t, "deploy-bot", c.ToolNames())

	var tpl sshd.MCPTemplates
	c.OK("list_templates", map[string]any{}, &tpl)
	if len(tpl.Templates) != 2 || tpl.Templates[0].Name != "data" || tpl.Templates[0].Survey[0].Name != "instances" || tpl.Templates[0].Survey[0].Type != "number" {
		t.Fatalf("templates: %+v", tpl)
	}
	var run api.RunView
	text := c.OK("launch", map[string]any{"template": "data", "kind": "plan", "answers": map[string]any{"instances": 2}}, &run)
	if run.ID != "1" || store.Status(run.Status) != store.StatusAwaitingApproval || len(run.Holds) != 1 || run.Holds[0].Rule != "agent" || run.RequesterKind != "agent" {
		t.Fatalf("an agent's dry run was not held before planning: %+v\n%s", run, text)
	}
	if !strings.Contains(text, "run 1: awaiting_approval") {
		t.Errorf("launch text:\n%s", text)
	}
	c.Subscribe("run://1")
	c.Subscribe("run://1/log")
	h.mustSSH("bob", "approve", "1", "--digest", h.show("bob", "1").Proposal.Digest)
	c.WaitFor("run://1", time.Minute)
	for store.Status(run.Status) != store.StatusSucceeded {
		c.OK("show_run", map[string]any{"run": "1"}, &run)
		if run.Run.Status.Final() && store.Status(run.Status) != store.StatusSucceeded {
			t.Fatalf("run 1 ended %s: %s", run.Status, run.Message)
		}
		if store.Status(run.Status) != store.StatusSucceeded {
			c.WaitFor("run://1", 2*time.Minute)
		}
	}
	var lg sshd.MCPLog
	c.OK("read_log", map[string]any{"run": "1", "offset": 0}, &lg)
	if !strings.Contains(lg.Text, "tofu plan") || !strings.Contains(lg.Text, "Plan: 2 to add") || lg.More || !lg.Finished || lg.NextOffset != lg.Size {
		t.Fatalf("read_log: %+v", lg)
	}
	ctx := context.Background()
	res, err := c.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "run://1/log"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != lg.Text {
		t.Fatalf("run://1/log: %v %+v", err, res)
	}
	if res, err = c.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "run://1"}); err != nil || !strings.Contains(res.Contents[0].Text, `"status":"succeeded"`) {
		t.Fatalf("run://1: %v %+v", err, res)
	}
	var viaMCP, viaSSH map[string]any
	c.OK("show_run", map[string]any{"run": "1"}, &viaMCP)
	if err := json.Unmarshal([]byte(h.mustSSH("deploy-bot", "show", "1", "--json")), &viaSSH); err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(viaMCP), fmt.Sprint(viaSSH); a != b {
		t.Errorf("show_run and show --json differ:\n%s\n%s", a, b)
	}
	if audit := h.mustSSH("alice", "audit", "--run", "1"); !strings.Contains(audit, "deploy-bot") || !strings.Contains(audit, "launch") {
		t.Errorf("audit lacks the agent's launch:\n%s", audit)
	}
}

// An agent's apply over MCP is held before anything plans, and no tool
// releases it: there is no approve or reject tool, and rerun, reconcile or
// a second launch leave it held. A person's key gets the same tools and
// cannot approve through MCP either; a person's apply over MCP waits for a
// person whatever the rules say. The legacy initialize handshake works too.
func TestMCPApplyHeldAndNoToolReleasesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	bot := h.mcpAs("deploy-bot")
	var run api.RunView
	bot.OK("launch", map[string]any{"template": "data"}, &run)
	if store.Status(run.Status) != store.StatusAwaitingApproval || run.Proposal == nil || run.Proposal.Stage != store.StageRequest || !run.AIProposal {
		t.Fatalf("agent apply: %+v", run)
	}
	for _, name := range []string{"approve", "reject", "approve_run"} {
		if _, err := bot.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"run": "1", "digest": run.Proposal.Digest}}); err == nil {
			t.Errorf("tool %s was accepted", name)
		}
	}
	if msg := bot.Refused("rerun", map[string]any{"run": "1"}); !strings.Contains(msg, "run 1") {
		t.Errorf("rerun of a held run: %s", msg)
	}
	bot.Refused("reconcile", map[string]any{"check": "1"})

	bob := h.mcpAs("bob", "2025-11-25")
	if v := bob.Session.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("initialize negotiated %q", v)
	}
	noReleaseTool(t, "bob", bob.ToolNames())
	bob.OK("show_run", map[string]any{"run": "1"}, &run)
	if !run.WaitingForYou || run.Waiting == "" {
		t.Errorf("bob should see that run 1 waits for him: %+v", run)
	}
	if got, err := h.db().GetRun("1"); err != nil || store.Status(got.Status) != store.StatusAwaitingApproval || len(got.Approvals) != 0 {
		t.Fatalf("run 1 after every tool: %s %+v %v", got.Status, got.Approvals, err)
	}
	if log := h.mustSSH("bob", "log", "1"); strings.Contains(log, "$ tofu") {
		t.Fatalf("something ran before a person released run 1:\n%s", log)
	}

	alice := h.mcpAs("alice")
	alice.OK("launch", map[string]any{"template": "data-free", "kind": "apply"}, &run)
	h.waitStatus(run.ID, store.StatusAwaitingApproval, store.StatusFailed)
	alice.OK("show_run", map[string]any{"run": run.ID}, &run)
	if store.Status(run.Status) != store.StatusAwaitingApproval || run.Proposal.Stage != store.StagePlan || !strings.Contains(run.Proposal.PlanText, "terraform_data.server[0]") {
		t.Fatalf("a person's apply over MCP did not wait with its plan: %s %s %+v", run.Status, run.Message, run.Proposal)
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/data/terraform.tfstate")); err == nil {
		t.Fatal("the apply changed the state before anyone released it")
	}

	// A rerun over MCP of an apply carol launched over SSH is an AI
	// proposal too: it waits for a person with its plan.
	h.mustSSH("carol", "launch", "data", "--var", "instances=1", "--wait")
	carol := h.mcpAs("carol")
	carol.OK("rerun", map[string]any{"run": "3"}, &run)
	if !run.AIProposal || run.RerunOf != "3" {
		t.Fatalf("rerun over MCP: %+v", run)
	}
	h.waitStatus(run.ID, store.StatusAwaitingApproval, store.StatusSucceeded, store.StatusFailed)
	carol.OK("show_run", map[string]any{"run": run.ID}, &run)
	if store.Status(run.Status) != store.StatusAwaitingApproval || run.Proposal.Stage != store.StagePlan {
		t.Fatalf("rerun %s over MCP did not wait for a person: %s %s", run.ID, run.Status, run.Message)
	}
}

// Hostile calls: an unknown tool, an argument of the wrong type, a run that
// does not exist, an offset past the log's end, a cancel of another's run,
// an answer of the wrong type; each is refused with a sentence and the
// session goes on.
func TestMCPHostileCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	c := h.mcpAs("helper-bot")
	if _, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: "rm_rf", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "rm_rf") {
		t.Errorf("unknown tool: %v", err)
	}
	for _, args := range []map[string]any{{"run": []string{"1"}}, {"run": 1}, {}, {"run": "1", "extra": true}} {
		c.Refused("show_run", args)
	}
	c.Refused("read_log", map[string]any{"run": "1", "offset": -1})
	c.Refused("launch", map[string]any{"template": []any{"data"}})
	c.Refused("launch", map[string]any{"template": "data", "kind": "destroy"})
	for _, tool := range []string{"show_run", "read_log", "cancel_run", "rerun"} {
		if msg := c.Refused(tool, map[string]any{"run": "999"}); !strings.Contains(msg, `no run "999"`) {
			t.Errorf("%s of a missing run: %s", tool, msg)
		}
	}
	if msg := c.Refused("read_log", map[string]any{"run": "1", "offset": int64(1) << 62}); !strings.Contains(msg, "outside run 1's log") {
		t.Errorf("huge offset: %s", msg)
	}
	if msg := c.Refused("cancel_run", map[string]any{"run": "1"}); !strings.Contains(msg, "may cancel only runs they asked for") {
		t.Errorf("cancel of carol's run: %s", msg)
	}
	if msg := c.Refused("launch", map[string]any{"template": "data", "answers": map[string]any{"instances": "many"}}); !strings.Contains(msg, "instances") {
		t.Errorf("a wrong-typed answer: %s", msg)
	}
	if msg := c.Refused("launch", map[string]any{"template": "data", "answers": map[string]any{"generation": 7}}); !strings.Contains(msg, "generation") {
		t.Errorf("a number for a text field: %s", msg)
	}
	ctx := context.Background()
	for _, uri := range []string{"run://999", "run://1/nope", "file:///etc/passwd"} {
		if _, err := c.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resource %s was read", uri)
		}
	}
	var lg sshd.MCPLog
	c.OK("read_log", map[string]any{"run": "1"}, &lg)
	if lg.Size == 0 || lg.NextOffset != lg.Size {
		t.Errorf("after the refusals: %+v", lg)
	}
	if runs, _ := h.db().ListRuns(); len(runs) != 1 {
		t.Errorf("refused launches queued runs: %d runs", len(runs))
	}
	var own api.RunView
	c.OK("launch", map[string]any{"template": "data"}, &own)
	c.OK("cancel_run", map[string]any{"run": own.ID}, &own)
	if store.Status(own.Status) != store.StatusCancelled {
		t.Errorf("cancel of its own held run: %+v", own)
	}
}

// Secret answers are accepted over MCP and never come back: not in a
// launch result, a refusal, show_run, list_runs, read_log or a resource,
// for a person's dry run that plans and an agent's held apply.
func TestMCPSecretAnswersNeverEchoed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "secret" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" {
    type = "string"
  }
  survey "api_note" {
    type      = "string"
    sensitive = true
  }
}
`)
	answers := map[string]any{"db_password": testkit.CanaryDB, "api_note": testkit.CanaryNote}
	alice, bot := h.mcpAs("alice"), h.mcpAs("deploy-bot")
	var seen bytes.Buffer
	keep := func(res *mcp.CallToolResult) {
		b, _ := json.Marshal(res)
		seen.Write(b)
	}
	keep(alice.Call("launch", map[string]any{"template": "secret", "kind": "plan", "answers": answers}))
	keep(bot.Call("launch", map[string]any{"template": "secret", "answers": answers}))
	keep(alice.Call("launch", map[string]any{"template": "secret", "answers": map[string]any{"db_password": 98765432123, "api_note": testkit.CanaryNote}}))
	keep(alice.Call("launch", map[string]any{"template": "secret", "answers": map[string]any{"nope": testkit.CanaryDB}}))
	h.waitStatus("1", store.StatusSucceeded)
	for _, tool := range []string{"show_run", "read_log"} {
		for _, id := range []string{"1", "2"} {
			keep(alice.Call(tool, map[string]any{"run": id}))
			keep(bot.Call(tool, map[string]any{"run": id}))
		}
	}
	keep(alice.Call("list_runs", map[string]any{}))
	for _, uri := range []string{"run://1", "run://1/log", "run://2"} {
		res, err := alice.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		seen.Write(b)
	}
	for _, c := range []string{testkit.CanaryDB, testkit.CanaryNote, testkit.CanaryDerived(), "98765432123"} {
		for _, f := range testkit.Forms(c) {
			if strings.Contains(seen.String(), f) {
				t.Errorf("an MCP result carries secret %q (as %q)", c, f)
			}
		}
	}
	if !strings.Contains(seen.String(), "Plan: 4 to add") || !strings.Contains(seen.String(), "db_password") {
		t.Errorf("the results lack the plan or the secret's name:\n%.2000s", seen.String())
	}
}

// A client that connects and never speaks is disconnected by the SSH idle
// timeout at the latest: its MCP session ends (it answers no ping), the
// connection closes, and nothing of it stays behind in the server. Live
// clients, answering the pings, outlast the timeout.
func TestMCPSilentClientIsDisconnected(t *testing.T) {
	h, _ := newLimitHarness(t, server.Options{SSHIdleTimeout: time.Second}, "")
	live := []*mcpConn{h.mcpAs("helper-bot"), h.mcpAs("alice", "2025-11-25")}
	time.Sleep(200 * time.Millisecond)
	baseline := runtime.NumGoroutine()
	client, err := dialAs(h, "deploy-bot")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	sess.Stdout = &out
	stdin, _ := sess.StdinPipe() // held open, never written
	defer stdin.Close()
	if err := sess.Start("mcp"); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the silent MCP session", sess.Wait)
	waitClosed(t, "the silent client's connection", client.Wait)
	if !strings.Contains(out.String(), `"method":"ping"`) {
		t.Errorf("the server sent no ping:\n%s", out.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		t.Errorf("%d goroutines after the silent client left, %d before it came", n, baseline)
	}
	for i, c := range live {
		var runs sshd.MCPRuns
		c.OK("list_runs", map[string]any{}, &runs)
		if runs.Total != 0 {
			t.Errorf("live client %d: %+v", i, runs)
		}
	}
}

// waitClosed waits up to five seconds for wait to return.
func waitClosed(t *testing.T, what string, wait func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s outlived the idle timeout", what)
	}
}

// Input that is not JSON, a message nested past the decoder's depth, and a
// message over the size bound each end their session at once (the client
// keeps its input open), and the server goes on serving others.
func TestMCPGarbageInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	for _, input := range []string{"not json at all\n", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + strings.Repeat("[", 100000) + "\n", `{"x":"` + strings.Repeat("a", sshd.MCPMaxMessage+10) + "\"}\n"} {
		client, err := dialAs(h, "deploy-bot")
		if err != nil {
			t.Fatal(err)
		}
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var out lockedBuffer
		sess.Stdout = &out
		stdin, _ := sess.StdinPipe()
		if err := sess.Start("mcp"); err != nil {
			t.Fatal(err)
		}
		go func() { stdin.Write([]byte(input)) }() // stdin stays open
		waitClosed(t, "a session fed garbage", sess.Wait)
		client.Close()
	}
	var tpl sshd.MCPTemplates
	h.mcpAs("deploy-bot").OK("list_templates", map[string]any{}, &tpl)
	if len(tpl.Templates) != 2 {
		t.Fatalf("after the garbage: %+v", tpl)
	}
}

// A drift check launched over MCP that finds drift keeps its plan, and the
// reconcile tool proposes exactly that plan: a reconcile held for a person.
func TestMCPCheckAndReconcile(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	c := h.mcpAs("carol")
	var run api.RunView
	c.OK("launch", map[string]any{"template": "data-free", "kind": "check"}, &run)
	h.waitStatus(run.ID, store.StatusSucceeded, store.StatusFailed)
	c.OK("show_run", map[string]any{"run": run.ID}, &run)
	if run.Check == nil || run.Check.Plan == nil {
		t.Fatalf("the check kept no plan: %s %s %+v", run.Status, run.Message, run.Check)
	}
	var rec api.RunView
	c.OK("reconcile", map[string]any{"check": run.ID}, &rec)
	if store.Kind(rec.Kind) != store.KindReconcile || store.Status(rec.Status) != store.StatusAwaitingApproval || rec.ReconcileOf != run.ID || rec.Proposal.Digest != run.Check.Plan.Digest {
		t.Fatalf("reconcile: %+v", rec)
	}
	if msg := c.Refused("reconcile", map[string]any{"check": run.ID}); !strings.Contains(msg, rec.ID) {
		t.Errorf("a second reconcile: %s", msg)
	}
}

// Promise (README): "a silent or garbage client cannot hurt other sessions";
// subscriptions are for runs that exist. Once, one agent could grow the
// server by a parked goroutine for every subscriptions/listen line it sent,
// with no bound per session.
func TestMCPListenFloodIsBounded(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	r := h.rawMCPAs("helper-bot")
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.await(t, `"id":0`, 10*time.Second)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	time.Sleep(200 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 5000
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["run://1"]}}}`+"\n", i)
	}
	if _, err := io.WriteString(r.in, b.String()); err != nil {
		t.Fatal(err)
	}
	t.Logf("first answer: %s", r.await(t, `acknowledged`, 10*time.Second))
	r.send(t, `{"jsonrpc":"2.0","id":999999,"method":"ping"}`)
	r.await(t, `"id":999999`, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	grew := runtime.NumGoroutine() - before
	t.Logf("goroutines: %d before, %d more after %d listens for run://1", before, grew, n)
	if grew > n/10 {
		t.Errorf("one MCP session's %d subscriptions to the same run://1 parked %d goroutines in the server; nothing bounds them", n, grew)
	}
	r.in.Close()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after its client closed stdin")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := runtime.NumGoroutine() - before; left > 5 {
		t.Errorf("%d goroutines left after the flooding session ended", left)
	}
}

// Promise (README): a garbage client cannot hurt other sessions or make the
// server hold what it cannot bound. Once, a client that wrote requests and
// never read its output parked one more goroutine in the server for every
// request, without bound.
func TestMCPClientThatNeverReadsIsBounded(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	client, err := dialAs(h, "helper-bot")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := sess.StdinPipe()
	sess.StdoutPipe() // never read
	if err := sess.Start("mcp"); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	time.Sleep(200 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 5000
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"show_run","arguments":{"run":"1"}}}`+"\n", i)
	}
	done := make(chan struct{})
	go func() { io.WriteString(stdin, b.String()); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
	}
	peak := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		peak = max(peak, runtime.NumGoroutine())
	}
	grew := peak - before
	t.Logf("goroutines: %d before, at most %d more after %d unread calls", before, grew, n)
	if grew > 500 {
		t.Errorf("a client that never reads parked %d goroutines in the server with %d requests", grew, n)
	}
	var tpl sshd.MCPTemplates
	h.mcpAs("deploy-bot").OK("list_templates", map[string]any{}, &tpl)
}

// A 100 MB line ends that MCP session after the 2 MiB bound, without the
// server reading the rest, and other sessions go on.
func TestMCPHundredMegabyteLineEndsOnlyItsSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	other := h.mcpAs("alice")
	client, err := dialAs(h, "deploy-bot")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := sess.StdinPipe()
	if err := sess.Start("mcp"); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan int64, 1)
	go func() {
		chunk := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 1<<20))
		var n int64
		for n < 100<<20 {
			m, err := stdin.Write(chunk)
			n += int64(m)
			if err != nil {
				break
			}
			chunk = []byte(strings.Repeat("a", 1<<20))
		}
		wrote <- n
	}()
	waitClosed(t, "a session sending a 100 MB line", sess.Wait)
	select {
	case n := <-wrote:
		if n >= 100<<20 {
			t.Errorf("the server took all %d bytes of the line", n)
		}
	case <-time.After(5 * time.Second):
	}
	var runs sshd.MCPRuns
	other.OK("list_runs", map[string]any{}, &runs)
}

// Promise (and intended, as far as the SSH rules go): `show` and `log` let
// any identity read any run, so an agent's MCP resources and read tools
// reading another requester's run and log match what its SSH key may do;
// cancel_run keeps the SSH rule: agents only their own, people with the
// approve role any, and another agent of the same kind cannot.
func TestMCPVisibilityMatchesSSH(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	h.mustSSH("helper-bot", "show", "1")
	h.mustSSH("helper-bot", "log", "1")
	c := h.mcpAs("helper-bot")
	for _, uri := range []string{"run://1", "run://1/log"} {
		if _, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Errorf("%s: %v (show/log over SSH allow it)", uri, err)
		}
	}
	var run api.RunView
	h.mcpAs("deploy-bot").OK("launch", map[string]any{"template": "data"}, &run)
	c.Refused("cancel_run", map[string]any{"run": run.ID})
	h.mcpAs("carol").Refused("cancel_run", map[string]any{"run": run.ID})
	h.mcpAs("bob").OK("cancel_run", map[string]any{"run": run.ID}, &run)
	if store.Status(run.Status) != store.StatusCancelled {
		t.Errorf("bob's cancel: %s", run.Status)
	}
}

// Promise (results carry structured content, with an output schema the SDK
// checks every result against): runs of every shape — a failed one with
// steps, a rejected one with a reason, a running one, a queued one waiting
// behind it, one from a git checkout (commit) — pass the output schema in
// show_run, list_runs and the run resource.
func TestMCPOutputSchemaFitsEveryRunShape(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
template "slow" {
  project = "infra"
  command = "infra/slow"
}
template "broken" {
  project = "infra"
  command = "infra/broken"
}
`)
	git := func(args ...string) {
		cmd := osexec.Command("git", append([]string{"-C", h.project, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "x")
	h.ssh("alice", "launch", "broken", "--dry-run", "--wait")        // 1 failed
	h.mustSSH("deploy-bot", "launch", "data")                        // 2 held
	h.mustSSH("alice", "reject", "2", "--reason", "not \u0085today") // rejected
	h.mustSSH("alice", "launch", "slow", "--dry-run")                // 3 running
	h.mustSSH("alice", "launch", "slow", "--dry-run")                // 4 queued behind 3
	h.waitStatus("3", store.StatusRunning)
	c := h.mcpAs("helper-bot")
	for _, id := range []string{"1", "2", "3", "4"} {
		var v api.RunView
		c.OK("show_run", map[string]any{"run": id}, &v)
		if _, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "run://" + id}); err != nil {
			t.Errorf("run://%s: %v", id, err)
		}
	}
	var runs sshd.MCPRuns
	c.OK("list_runs", map[string]any{}, &runs)
	h.mcpAs("alice").OK("cancel_run", map[string]any{"run": "4"}, nil)
	h.mustSSH("alice", "cancel", "3")
}
