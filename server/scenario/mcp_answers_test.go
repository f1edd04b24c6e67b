package scenario

// Answers given over MCP are validated exactly as launch validates them, and
// a secret answer is never echoed back.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchtender/switchtender/server/api"
)

// Promise (docs/mcp.md): launch's answers are validated
// exactly as `launch` validates them; `launch --answers -` refuses a null
// answer ("answer %q is null; give a value or leave it out", readAnswers in
// answers.go). Once, a null answer over MCP was taken as the empty string and
// overrode the field's default.
func TestMCPRefusesANullAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	c := h.mcpAs("alice")
	res := c.Call("launch", map[string]any{"template": "data", "kind": "plan", "answers": map[string]any{"generation": nil}})
	if !res.IsError {
		var run api.RunView
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &run)
		t.Errorf("a null answer over MCP was accepted: run %s, answers %v (launch --answers - refuses null)", run.ID, run.Answers)
	}
}

// Promise (README: "a refusal is a tool error carrying the server's one
// sentence, which never repeats an answer"; "Secret answers are accepted and
// sealed, never shown back"). Once, answers sent as a JSON-encoded string
// were refused by the SDK's input validation with a message quoting the whole
// value, sensitive answer included.
func TestMCPStringifiedAnswersNeverEchoTheSecret(t *testing.T) {
	t.Parallel()
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

// A secret misplaced at the top level, nested in an object or list for a text
// field, or under a field name with a lookalike letter is refused without
// being repeated, and nothing is queued.
func TestMCPMisplacedSecretIsNeverEchoed(t *testing.T) {
	t.Parallel()
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
	if runs, _ := h.db().ListRuns(); len(runs) != 0 {
		t.Errorf("%d runs were queued", len(runs))
	}
}

// Promise: answers are validated exactly as launch validates them; `launch
// --answers -` refuses an answer given twice in the JSON object ("answer %q
// is given twice", duplicateKey in answers.go), since encoding/json would
// silently keep the last. Once, a launch over MCP whose answers named
// db_password twice was accepted with one of them, silently.
func TestMCPRefusesAnAnswerGivenTwice(t *testing.T) {
	t.Parallel()
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

// Promise (README: answers are "JSON values as with --answers -"; readAnswers
// keeps "numbers keep the digits given"): a number answer reaches the run as
// the digits the client sent. Once, a number answer over MCP lost digits past
// float64's precision, 9007199254740993 becoming 9007199254740992.
func TestMCPNumberAnswerKeepsItsDigits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	c := h.mcpAs("alice")
	var run api.RunView
	c.OK("launch", map[string]any{"template": "data", "kind": "plan", "answers": map[string]any{"instances": json.Number("9007199254740993")}}, &run)
	if got := run.Answers["instances"]; got != "9007199254740993" {
		t.Errorf("instances answered 9007199254740993 over MCP is %q in the run", got)
	}
	if r, err := h.db().GetRun(run.ID); err == nil && r.Vars["instances"] != "9007199254740993" {
		t.Errorf("TF_VAR_instances of the run: %q", r.Vars["instances"])
	}
	h.ssh("alice", "cancel", run.ID)
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
	res, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: "launch", Arguments: args})
	if err != nil {
		return err.Error(), false
	}
	b, _ := json.Marshal(res)
	return string(b), !res.IsError
}
