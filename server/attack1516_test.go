package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/switchtender/switchtender/server/config"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Attack 15/16: the JSON contract (issue 15) and MCP for agents (issue 16).

// jsonRefusal decodes stderr as the contract's refusal object.
func jsonRefusal(t *testing.T, what, stderr string) errorWire {
	t.Helper()
	var e errorWire
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &e); err != nil || e.Error.Code == "" {
		t.Errorf("%s: stderr is not the JSON refusal object: %q (%v)", what, stderr, err)
	}
	return e
}

// Promise (docs/json.md): with --json a refusal goes to stderr as one JSON
// object, malformed words included (code "usage", exit 2). The flag
// package takes --json=1, --json=t and --json=True as asking for JSON (and
// a not-found refusal after parsing does come as JSON), but asksJSON
// (commands.go, the switch on "--json", "-json", "--json=true",
// "-json=true") decides how a usage refusal is written before parsing and
// knows only those spellings: `show --json=1` gets its usage refusal in
// text.
func TestAttack1516JSONSpellingsOfTrueRefusedInText(t *testing.T) {
	h := newHarness(t, dataTemplates)
	for _, spelling := range []string{"--json=1", "--json=t", "--json=True", "-json=TRUE"} {
		// after parsing: JSON (the flag really is true)
		_, errOut, code := h.ssh("alice", "show", "999", spelling)
		if code != exitRefused {
			t.Errorf("show 999 %s: exit %d", spelling, code)
		}
		jsonRefusal(t, "show 999 "+spelling, errOut)
		// malformed words: the same flag, but the refusal is text
		_, errOut, code = h.ssh("alice", "show", spelling)
		if code != exitUsage {
			t.Errorf("show %s: exit %d", spelling, code)
		}
		jsonRefusal(t, "show "+spelling+" (no RUN)", errOut)
	}
}

// Held: --json given twice, or as --json --json=false, is malformed words
// refused as JSON with exit 2 and nothing on stdout.
func TestAttack1516JSONGivenTwice(t *testing.T) {
	h := newHarness(t, dataTemplates)
	for _, args := range [][]string{{"show", "1", "--json", "--json"}, {"runs", "--json", "--json=false"}, {"whoami", "-json", "--json"}} {
		out, errOut, code := h.ssh("alice", args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d stdout %q", args, code, out)
		}
		if e := jsonRefusal(t, strings.Join(args, " "), errOut); e.Error.Code != errCodeUsage {
			t.Errorf("%v: code %q", args, e.Error.Code)
		}
	}
}

// Held: a run ID that is not the canonical decimal (leading zero, a sign,
// spaces, non-ASCII digits, huge) names no run, over SSH and over MCP, as
// a tool argument and as a resource URI.
func TestAttack1516RunIDSpellings(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	for _, id := range []string{"01", "+1", " 1", "1 ", "١", "１", "1e0", "0x1", "18446744073709551617"} {
		out, errOut, code := h.ssh("alice", "show", id, "--json")
		if code != exitRefused || out != "" {
			t.Errorf("show %q: exit %d stdout %q", id, code, out)
		}
		if e := jsonRefusal(t, "show "+id, errOut); e.Error.Code != "not_found" {
			t.Errorf("show %q: %+v", id, e)
		}
	}
	c := h.mcpAs("helper-bot", "2025-11-25") // legacy subscribe: the client sees the server's answer
	for _, id := range []string{"01", "+1", " 1", "１"} {
		c.refused("show_run", map[string]any{"run": id})
		c.refused("cancel_run", map[string]any{"run": id})
	}
	for _, uri := range []string{"run://01", "run://+1", "run://1/../2", "run://1/log/", "run://1/log/../log", "run://１", "RUN://1", "run://1?x=1", "run://1#log", "run:///1"} {
		if _, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resource %q was read", uri)
		}
		if err := c.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err == nil {
			t.Errorf("resource %q was subscribed to", uri)
		}
	}
}

// Promise (issue 16, 4; README "MCP for AI agents"): launch's answers are
// validated exactly as `launch` validates them; `launch --answers -`
// refuses a null answer ("answer %q is null; give a value or leave it
// out", readAnswers in answers.go). mcpAnswers (mcp_tools.go) tries
// json.Unmarshal(v, &s) first, which succeeds on null and leaves s "", so
// a null answer over MCP is taken as the empty string (quoted, so even a
// text field accepts it) and overrides the field's default; its own null
// check after that is dead for null.
func TestAttack1516MCPNullAnswerTakenAsEmptyString(t *testing.T) {
	h := newHarness(t, dataTemplates)
	c := h.mcpAs("alice")
	res := c.call("launch", map[string]any{"template": "data", "kind": "plan", "answers": map[string]any{"generation": nil}})
	if !res.IsError {
		var run runView
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &run)
		t.Errorf("a null answer over MCP was accepted: run %s, answers %v (launch --answers - refuses null)", run.ID, run.Answers)
	}
}

// rawMCP is an MCP session over SSH driven by hand: JSON-RPC lines in,
// lines out.
type rawMCP struct {
	in    io.WriteCloser
	lines chan string
	done  chan error
}

func (h *harness) rawMCPAs(user string) *rawMCP {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatal(err)
	}
	sess, err := client.NewSession()
	if err != nil {
		h.t.Fatal(err)
	}
	stdin, _ := sess.StdinPipe()
	stdout, _ := sess.StdoutPipe()
	if err := sess.Start("mcp"); err != nil {
		h.t.Fatal(err)
	}
	r := &rawMCP{in: stdin, lines: make(chan string, 1<<16), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			select {
			case r.lines <- sc.Text():
			default:
			}
		}
		r.done <- sc.Err()
	}()
	h.t.Cleanup(func() { stdin.Close(); sess.Close(); client.Close() })
	return r
}

func (r *rawMCP) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(r.in, msg+"\n"); err != nil {
		t.Fatalf("writing to the MCP session: %v", err)
	}
}

// await returns the first line that contains want.
func (r *rawMCP) await(t *testing.T, want string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l := <-r.lines:
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			t.Fatalf("no line with %q within %s", want, within)
			return ""
		}
	}
}

// Promise (issue 16; README): "a silent or garbage client cannot hurt
// other sessions"; subscriptions are for runs that exist. Under the
// protocol version the SDK negotiates by default (2026-07-28), a
// subscription is a subscriptions/listen request the SDK parks until the
// client cancels it, a goroutine each; the subscribe handler
// (mcpSession.subscribe, mcp.go) accepts the same run://1 any number of
// times and nothing bounds how many listens one session holds, so one
// agent grows the server by a goroutine (and its stack) per line it sends.
func TestAttack1516MCPListenFloodGrowsServer(t *testing.T) {
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

// Promise (issue 16, 2; README "MCP for AI agents"): "Every result carries
// both text (what the SSH command prints) and structured content (the
// object show --json prints)"; docs/json.md: cancel prints the whole run,
// plan text included, and says what it did ("run N was held for approval
// and is cancelled"). cancel_run over MCP returns runResult(run, false)
// (mcp_tools.go, mcpSession.cancel; likewise launch, reconcile, rerun):
// m.s.view(r, who, false) drops proposal.plan_text, so the structured run
// is not the object `cancel --json`/`show --json` print; and it calls
// Cancel, not cancelRun, so the text lacks the sentence saying what the
// cancel did.
func TestAttack1516MCPCancelResultIsNotShowJSON(t *testing.T) {
	h := newHarness(t, dataTemplates)
	alice := h.mcpAs("alice")
	var run runView
	alice.ok("launch", map[string]any{"template": "data-free", "kind": "apply"}, &run)
	h.waitStatus(run.ID, StatusAwaitingApproval, StatusFailed)
	var held runView
	alice.ok("show_run", map[string]any{"run": run.ID}, &held)
	if held.Proposal == nil || held.Proposal.PlanText == "" {
		t.Fatalf("the held apply has no plan text: %+v", held.Proposal)
	}
	var cancelled runView
	text := alice.ok("cancel_run", map[string]any{"run": run.ID}, &cancelled)
	shown := h.show("alice", run.ID)
	if shown.Proposal == nil || shown.Proposal.PlanText == "" {
		t.Fatalf("show --json after the cancel has no plan text")
	}
	if cancelled.Proposal == nil || cancelled.Proposal.PlanText != shown.Proposal.PlanText {
		t.Errorf("cancel_run's structured run lacks the plan text show --json prints (%d bytes)", len(shown.Proposal.PlanText))
	}
	if !strings.Contains(text, "was held for approval and is cancelled") {
		t.Errorf("cancel_run's text does not say what the cancel did, as cancel does:\n%s", text)
	}
}

// Held: exit statuses of log --follow (0 succeeded, 3 held, 1 otherwise)
// with --json, and its last line; cancel --json of a held run prints the
// run object only (no sentence on stdout).
func TestAttack1516FollowExitCodes(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	out, _, code := h.ssh("carol", "log", "1", "--follow", "--json")
	if code != exitOK || !strings.Contains(out, `"status":"succeeded"`) {
		t.Errorf("log --follow --json of a succeeded run: exit %d\n%s", code, out)
	}
	h.mustSSH("deploy-bot", "launch", "data") // held before planning
	out, _, code = h.ssh("carol", "log", "2", "--follow", "--json")
	if code != exitHeld || !strings.Contains(out, `"status":"awaiting_approval"`) {
		t.Errorf("log --follow --json of a held run: exit %d\n%s", code, out)
	}
	out, errOut, code := h.ssh("deploy-bot", "cancel", "2", "--json")
	var v map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v["status"] != "cancelled" {
		t.Errorf("cancel --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, ok := v["exit_code"]; ok {
		t.Errorf("a run cancelled before anything ran has an exit_code: %v", v["exit_code"])
	}
	out, _, code = h.ssh("carol", "log", "2", "--follow", "--json")
	if code != exitRefused || !strings.Contains(out, `"status":"cancelled"`) {
		t.Errorf("log --follow --json of a cancelled run: exit %d\n%s", code, out)
	}
}

// Promise (issue 16; README): a garbage client cannot hurt other sessions
// or make the server hold what it cannot bound. A client that writes
// requests and never reads its output: once the SSH window is full every
// reply blocks in the SDK's writer, and each further request parks one
// more goroutine (with its result) in the server, without bound, while the
// client's own writes keep the connection from ever being idle.
func TestAttack1516MCPClientThatNeverReads(t *testing.T) {
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
	var tpl mcpTemplates
	h.mcpAs("deploy-bot").ok("list_templates", map[string]any{}, &tpl)
}

const secretTemplate = `
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
`

// launchSeen calls launch with args and returns everything the client got
// back, and whether it was accepted.
func launchSeen(t *testing.T, c *mcpConn, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "launch", Arguments: args})
	if err != nil {
		return err.Error(), false
	}
	b, _ := json.Marshal(res)
	return string(b), !res.IsError
}

// Promise (issue 16, 4; README: "a refusal is a tool error carrying the
// server's one sentence, which never repeats an answer"; "Secret answers
// are accepted and sealed, never shown back"). A model commonly sends an
// object argument as a JSON-encoded string: answers =
// "{\"api_note\":\"SECRET\"}" (or wraps it in a list). The SDK's input
// validation of launchSchema's "answers" (mcp_tools.go, launchSchema /
// addMCPTool: the arguments are validated by the SDK before mcpAnswers
// sees them) refuses it with "validating /properties/answers: type: <the
// whole value> has type \"string\", want \"object\"": the sensitive answer
// comes back in the tool result, into the model's context and transcript.
func TestAttack1516MCPStringifiedAnswersEchoSecret(t *testing.T) {
	h := newHarness(t, secretTemplate)
	c := h.mcpAs("deploy-bot")
	const secret = "Zq9-canary-hunter2-7781"
	for _, answers := range []any{
		`{"db_password":"x","api_note":"` + secret + `"}`,
		[]any{map[string]any{"api_note": secret}},
	} {
		seen, accepted := launchSeen(t, c, map[string]any{"template": "secret", "answers": answers})
		if accepted {
			t.Errorf("answers %v were accepted", answers)
		}
		if strings.Contains(seen, "hunter2") {
			t.Errorf("answers given as %T: the refusal repeats the secret answer:\n%s", answers, seen)
		}
	}
}

// Held: a secret misplaced at the top level, nested in an object or list
// for a text field, or under a field name with a lookalike letter is
// refused without being repeated, and nothing is queued.
func TestAttack1516MCPMisplacedSecretNotEchoed(t *testing.T) {
	h := newHarness(t, secretTemplate)
	c := h.mcpAs("deploy-bot")
	const secret = "Zq9-canary-hunter2-7781"
	for _, args := range []map[string]any{
		{"template": "secret", "api_note": secret},
		{"template": "secret", "answers": map[string]any{"db_password": "x", "api_note": map[string]any{"v": secret}}},
		{"template": "secret", "answers": map[string]any{"db_password": "x", "api_note": []any{secret}}},
		{"template": "secret", "answers": map[string]any{"db_password": "x", "api_nоte": secret}}, // Cyrillic о
		{"template": "secret", "answers": map[string]any{"db_password": "x", "api_note": secret, "extra": secret}},
		{"template": "secret", "answers": map[string]any{"db_password": "x", "api_note": 12345678987654321}},
	} {
		seen, accepted := launchSeen(t, c, args)
		if accepted {
			t.Errorf("launch %v was accepted", args)
		}
		if strings.Contains(seen, "hunter2") || strings.Contains(seen, "12345678987654321") {
			t.Errorf("launch %v: the refusal repeats the secret: %s", args, seen)
		}
	}
	if runs, _ := h.srv.db.ListRuns(); len(runs) != 0 {
		t.Errorf("%d runs were queued", len(runs))
	}
}

// Promise (issue 16, 4): answers are validated exactly as launch validates
// them; `launch --answers -` refuses an answer given twice in the JSON
// object ("answer %q is given twice", duplicateKey in answers.go), since
// encoding/json would silently keep the last. Over MCP the arguments are
// decoded into map[string]json.RawMessage (mcpLaunchArgs.Answers,
// mcp_tools.go) after the SDK's own decoding, which keeps the last value:
// a launch whose answers name db_password twice is accepted with one of
// them, silently.
func TestAttack1516MCPDuplicateAnswerAccepted(t *testing.T) {
	h := newHarness(t, dataTemplates)
	r := h.rawMCPAs("alice")
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.await(t, `"id":0`, 10*time.Second)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"launch","arguments":{"template":"data","kind":"plan","answers":{"generation":"first","generation":"second"}}}}`)
	line := r.await(t, `"id":1`, 20*time.Second)
	if !strings.Contains(line, `"isError":true`) {
		t.Errorf("answers naming generation twice were accepted over MCP (launch --answers - refuses them):\n%.600s", line)
	}
}

// Promise (docs/json.md, the run object): a hold's "waits_for" is present
// "while it holds"; "waiting" only "while held"; times not yet known are
// left out. A held run that was cancelled (or rejected) waits for nobody,
// and its text says so (writeHolds prints "waits for" only while
// awaiting_approval), but holdViews (permissions.go: "if v.ReleasedBy ==
// "" { v.WaitsFor = s.waitsForIn(r, h) }") fills waits_for whatever the
// run's status: show --json of a cancelled run still names whom its holds
// wait for.
func TestAttack1516JSONEndedRunStillWaitsFor(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("deploy-bot", "launch", "data") // held before planning
	h.mustSSH("deploy-bot", "cancel", "1")
	out := h.mustSSH("alice", "show", "1", "--json")
	if strings.Contains(out, "0001-01-01") {
		t.Errorf("show --json carries a zero time:\n%s", out)
	}
	var v struct {
		Status  string           `json:"status"`
		Waiting *string          `json:"waiting"`
		Holds   []map[string]any `json:"holds"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Status != "cancelled" || len(v.Holds) == 0 {
		t.Fatalf("show 1 --json: %v\n%s", err, out)
	}
	if v.Waiting != nil {
		t.Errorf("a cancelled run has \"waiting\": %q", *v.Waiting)
	}
	for _, hold := range v.Holds {
		if wf, ok := hold["waits_for"]; ok {
			t.Errorf("a hold of a cancelled run still waits for %q (rule %v)", wf, hold["rule"])
		}
	}
	if text := h.mustSSH("alice", "show", "1"); strings.Contains(text, "waits for") {
		t.Logf("(the text says waits for too:\n%s)", text)
	}
}

// Held (docs/json.md): launch, reject and rerun with --json print the
// object show --json prints right after, field for field; whoami --json
// has its four fields, roles [] for an agent; runs --json is [] on an
// empty filter result.
func TestAttack1516JSONSameRunObject(t *testing.T) {
	h := newHarness(t, dataTemplates)
	if out := h.mustSSH("alice", "runs", "--json", "--status", "failed"); strings.TrimSpace(out) != "[]" {
		t.Errorf("runs --json with nothing matching: %q", out)
	}
	var who map[string]any
	json.Unmarshal([]byte(h.mustSSH("deploy-bot", "whoami", "--json")), &who)
	if roles, ok := who["roles"].([]any); !ok || len(roles) != 0 || who["kind"] != "agent" || len(who) != 4 {
		t.Errorf("whoami --json of an agent: %v", who)
	}
	same := func(what, got, id string) {
		t.Helper()
		var a, b map[string]any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, got)
		}
		json.Unmarshal([]byte(h.mustSSH("alice", "show", id, "--json")), &b)
		delete(a, "waiting_for_you")
		delete(b, "waiting_for_you")
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s --json differs from show --json:\n%v\n%v", what, a, b)
		}
	}
	same("launch", h.mustSSH("deploy-bot", "launch", "data", "--json"), "1")
	same("reject", h.mustSSH("alice", "reject", "1", "--reason", "no", "--json"), "1")
	same("rerun", h.mustSSH("deploy-bot", "rerun", "1", "--json"), "2")
}

// Promise (convention the flag package and POSIX share, which parse
// follows for `--` itself: `show -- --json` takes --json as the RUN): `--`
// ends the flags, every word after it is an argument. parse (commands.go)
// calls fs.Parse again on what follows each positional argument, so a
// flag after `--` and one argument is parsed as a flag again: `show -- 1
// --json` prints JSON, while `show -- --json 1` is refused as two RUNs.
func TestAttack1516FlagAfterDoubleDash(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	_, _, code := h.ssh("alice", "show", "--", "--json", "1")
	if code != exitUsage {
		t.Errorf("show -- --json 1: exit %d, want 2 (two arguments)", code)
	}
	out, _, code := h.ssh("alice", "show", "--", "1", "--json")
	if code != exitUsage || strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("show -- 1 --json: exit %d, --json after -- was taken as a flag:\n%.200s", code, out)
	}
}

// Promise (docs/json.md): a refusal is JSON when --json was asked for, and
// text otherwise. asksJSON (commands.go) looks for the word --json
// anywhere, so --json given as a flag's value (a --reason, a --template)
// turns a usage refusal of a text command into JSON: `reject --reason
// --json` (RUN missing) answers {"error":…} though nobody asked for JSON,
// while a refusal after parsing (`runs --template --json`) is text.
func TestAttack1516JSONAsFlagValueTurnsRefusalJSON(t *testing.T) {
	h := newHarness(t, dataTemplates)
	_, errOut, code := h.ssh("alice", "runs", "--template", "--json")
	if code != exitRefused || strings.HasPrefix(errOut, "{") {
		t.Errorf("runs --template --json (a template named --json): exit %d %q", code, errOut)
	}
	_, errOut, code = h.ssh("alice", "reject", "--reason", "--json")
	if code != exitUsage || strings.HasPrefix(errOut, "{") {
		t.Errorf("reject --reason --json (no RUN; no JSON asked): exit %d, refusal in JSON: %q", code, errOut)
	}
}

// Held: a 100 MB line ends that MCP session after the 2 MiB bound, without
// the server reading the rest, and other sessions go on.
func TestAttack1516MCPHundredMegabyteLine(t *testing.T) {
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
	var runs mcpRuns
	other.ok("list_runs", map[string]any{}, &runs)
}

// Held (docs/json.md): lists are [] and maps {}, never null, in every
// command's JSON on a fresh server and for a template with no survey; an
// agent's run held before planning has no null anywhere either.
func TestAttack1516JSONNoNulls(t *testing.T) {
	h := newHarness(t, dataTemplates+`
template "bare" {
  project = "infra"
  command = "infra/data"
}
`)
	for _, args := range [][]string{{"runs", "--json"}, {"templates", "--json"}, {"audit", "--json"}, {"whoami", "--json"}} {
		if out := h.mustSSH("bob", args...); strings.Contains(out, "null") {
			t.Errorf("%v: null in\n%s", args, out)
		}
	}
	h.mustSSH("deploy-bot", "launch", "bare")
	for _, args := range [][]string{{"runs", "--json"}, {"show", "1", "--json"}, {"audit", "--json", "--run", "1"}} {
		if out := h.mustSSH("bob", args...); strings.Contains(out, "null") {
			t.Errorf("%v: null in\n%s", args, out)
		}
	}
	c := h.mcpAs("deploy-bot")
	res := c.call("show_run", map[string]any{"run": "1"})
	if b, _ := json.Marshal(res.StructuredContent); strings.Contains(string(b), "null") {
		t.Errorf("show_run: null in %s", b)
	}
}

// Promise (docs/json.md): requester_kind is "person" or "agent", the
// words the text uses; the store's "user" never shows.
func TestAttack1516JSONVocabulary(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	h.mustSSH("deploy-bot", "launch", "data")
	for _, id := range []string{"1", "2"} {
		out := h.mustSSH("alice", "show", id, "--json")
		if strings.Contains(out, `"user"`) {
			t.Errorf("show %s --json says \"user\":\n%s", id, out)
		}
	}
	c := h.mcpAs("helper-bot")
	for _, uri := range []string{"run://1", "run://2"} {
		res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || strings.Contains(res.Contents[0].Text, `"user"`) {
			t.Errorf("%s: %v says \"user\"", uri, err)
		}
	}
}

// Held (and intended, as far as the SSH rules go): `show` and `log` let
// any identity read any run, so an agent's MCP resources and read tools
// reading another requester's run and log match what its SSH key may do;
// cancel_run keeps the SSH rule: agents only their own, people with the
// approve role any, and another agent of the same kind cannot.
func TestAttack1516MCPVisibilityMatchesSSH(t *testing.T) {
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	h.mustSSH("helper-bot", "show", "1")
	h.mustSSH("helper-bot", "log", "1")
	c := h.mcpAs("helper-bot")
	for _, uri := range []string{"run://1", "run://1/log"} {
		if _, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Errorf("%s: %v (show/log over SSH allow it)", uri, err)
		}
	}
	var run runView
	h.mcpAs("deploy-bot").ok("launch", map[string]any{"template": "data"}, &run)
	c.refused("cancel_run", map[string]any{"run": run.ID})
	h.mcpAs("carol").refused("cancel_run", map[string]any{"run": run.ID})
	h.mcpAs("bob").ok("cancel_run", map[string]any{"run": run.ID}, &run)
	if Status(run.Status) != StatusCancelled {
		t.Errorf("bob's cancel: %s", run.Status)
	}
}

// Held (issue 16, 2: results carry structured content, with an output
// schema the SDK checks every result against): runs of every shape — a
// failed one with steps, a rejected one with a reason, a running one, a
// queued one waiting behind it, one from a git checkout (commit) — pass
// the output schema in show_run, list_runs and the run resource.
func TestAttack1516MCPOutputSchemaAllShapes(t *testing.T) {
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
	h.waitStatus("3", StatusRunning)
	c := h.mcpAs("helper-bot")
	for _, id := range []string{"1", "2", "3", "4"} {
		var v runView
		c.ok("show_run", map[string]any{"run": id}, &v)
		if _, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "run://" + id}); err != nil {
			t.Errorf("run://%s: %v", id, err)
		}
	}
	var runs mcpRuns
	c.ok("list_runs", map[string]any{}, &runs)
	h.mcpAs("alice").ok("cancel_run", map[string]any{"run": "4"}, nil)
	h.mustSSH("alice", "cancel", "3")
}

// Promise (issue 16, 4; README: answers are "JSON values as with
// --answers -"; readAnswers keeps "numbers keep the digits given"): a
// number answer reaches the run as the digits the client sent. Over MCP
// the SDK decodes the arguments into Go values (float64) to validate them
// against launchSchema and marshals them again before mcpAnswers
// (mcp_tools.go) sees json.RawMessage, so 9007199254740993 becomes
// 9007199254740992 (any integer past 2^53, any decimal past float64's
// precision): the run plans with a number nobody gave.
func TestAttack1516MCPNumberAnswerLosesDigits(t *testing.T) {
	h := newHarness(t, dataTemplates)
	c := h.mcpAs("alice")
	var run runView
	c.ok("launch", map[string]any{"template": "data", "kind": "plan", "answers": map[string]any{"instances": json.Number("9007199254740993")}}, &run)
	if got := run.Answers["instances"]; got != "9007199254740993" {
		t.Errorf("instances answered 9007199254740993 over MCP is %q in the run", got)
	}
	if r, err := h.srv.db.GetRun(run.ID); err == nil && r.Vars["instances"] != "9007199254740993" {
		t.Errorf("TF_VAR_instances of the run: %q", r.Vars["instances"])
	}
	h.ssh("alice", "cancel", run.ID)
}

// Promise (README; cancel_run: "your own runs (a person with the approve
// role: any run)"): a person with only the launch role cancels only runs
// they asked for. Scheduled drift checks are asked for by the identity
// "schedule" (schedule.go, scheduleIdentity, requester kind "user"), and
// the configuration does not reserve that name (config/decode.go,
// declare): a user named schedule with just the launch role passes
// mayCancel's "own" test (permissions.go: r.Requester == who.Name and
// both are not agents) and cancels every scheduled check, over MCP or SSH,
// and its own actions read in the audit trail as the schedule's. Fixed: the
// configuration refuses the server's own names for users and agents.
func TestAttack1516UserNamedScheduleCancelsScheduledChecks(t *testing.T) {
	for _, name := range config.ReservedIdentityNames {
		for _, kind := range []string{"user", "agent"} {
			src := fmt.Sprintf("server {\n  data_dir = %q\n}\n%s %q {\n  public_key = \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEMqYtaU1fgGeV5t8wMv6bMMjC1C8b4XhSiXqaUXDs1H\"\n}\n", t.TempDir(), kind, name)
			p := filepath.Join(t.TempDir(), "c.hcl")
			os.WriteFile(p, []byte(src), 0o600)
			if _, err := config.Load(p); err == nil || !strings.Contains(err.Error(), "Reserved name") {
				t.Errorf("%s %q: %v; want the name refused as the server's own", kind, name, err)
			}
		}
	}
}
