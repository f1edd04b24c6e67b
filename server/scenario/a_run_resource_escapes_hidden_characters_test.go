package scenario

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The run resource is the run as show --json prints it, hidden characters
// included: a bidirectional control in a value (an answer, an address in
// the change set) reads as its \u escape in the resource's JSON text, as
// in show --json, never as the character that reorders what a reader sees.
func TestARunResourceEscapesHiddenCharactersAsShowJSONDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--var", "generation=1\u202egnp.exe", "--wait")
	if out := h.mustSSH("carol", "show", "1", "--json"); strings.ContainsRune(out, '\u202e') || !strings.Contains(out, `\u202e`) {
		t.Fatalf("show 1 --json does not escape the bidirectional control:\n%s", out)
	}
	c := h.mcpAs("helper-bot")
	res, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "run://1"})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("run://1: %v", err)
	}
	if text := res.Contents[0].Text; strings.ContainsRune(text, '\u202e') || !strings.Contains(text, `\u202e`) {
		t.Errorf("run://1's JSON text holds the bidirectional control itself, not its escape:\n%s", text)
	}
}
