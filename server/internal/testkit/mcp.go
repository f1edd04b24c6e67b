package testkit

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	gossh "golang.org/x/crypto/ssh"
)

// mcpConn is an MCP client session over SSH, with the resource-updated
// notifications it received.
// MCPConn is an MCP client session over `ssh … mcp`.
type MCPConn struct {
	T       testing.TB
	Session *mcp.ClientSession
	Updated chan string   // the URIs of resources/updated notifications
	Stderr  *LockedBuffer // the session's stderr
}

// DialMCP starts `mcp` on client (logged in as user) and connects an MCP
// client to it; version, if given, is the protocol version the client asks
// for. The session, and client, close when the test ends.
func DialMCP(t testing.TB, client *gossh.Client, user string, version ...string) *MCPConn {
	t.Helper()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &MCPConn{T: t, Updated: make(chan string, 64), Stderr: &LockedBuffer{}}
	sess.Stderr = c.Stderr
	if err := sess.Start("mcp"); err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "switchtender-test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.Updated <- r.Params.URI:
			default:
			}
		},
	})
	var opts *mcp.ClientSessionOptions
	if len(version) > 0 {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version[0]}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Session, err = cl.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdout), Writer: stdin}, opts)
	if err != nil {
		t.Fatalf("MCP connect as %s: %v (stderr %q)", user, err, c.Stderr.String())
	}
	t.Cleanup(func() {
		c.Session.Close()
		sess.Close()
		client.Close()
	})
	return c
}

// Call calls a tool and returns its result; a protocol error fails the test.
func (c *MCPConn) Call(name string, args any) *mcp.CallToolResult {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.T.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// OK calls a tool that must succeed and decodes its structured content
// into out (when not nil); it returns the result's text.
func (c *MCPConn) OK(name string, args, out any) string {
	c.T.Helper()
	res := c.Call(name, args)
	text := ResultText(res)
	if res.IsError {
		c.T.Fatalf("%s %v refused: %s", name, args, text)
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			c.T.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			c.T.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return text
}

// Refused calls a tool that must be refused and returns the refusal.
func (c *MCPConn) Refused(name string, args any) string {
	c.T.Helper()
	res := c.Call(name, args)
	if !res.IsError {
		c.T.Fatalf("%s %v was not refused: %s", name, args, ResultText(res))
	}
	return ResultText(res)
}

// ResultText is the text content of a tool result.
func ResultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// WaitFor waits for a resources/updated notification of uri.
func (c *MCPConn) WaitFor(uri string, within time.Duration) {
	c.T.Helper()
	deadline := time.After(within)
	for {
		select {
		case got := <-c.Updated:
			if got == uri {
				return
			}
		case <-deadline:
			c.T.Fatalf("no resources/updated notification for %s within %s", uri, within)
		}
	}
}

// Subscribe subscribes to uri.
func (c *MCPConn) Subscribe(uri string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		c.T.Fatalf("subscribing to %s: %v", uri, err)
	}
}

// ToolNames lists the session's tools, checking that each has a
// description and an object input schema.
func (c *MCPConn) ToolNames() []string {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Session.ListTools(ctx, nil)
	if err != nil {
		c.T.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 || tool.InputSchema == nil || tool.OutputSchema == nil {
			c.T.Errorf("tool %s: description %q, schemas %v %v", tool.Name, tool.Description, tool.InputSchema, tool.OutputSchema)
		}
	}
	slices.Sort(names)
	return names
}
