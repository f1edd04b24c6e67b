package scenario

// rawMCP: an MCP session over SSH driven line by line, for tests that send
// what a real client would not.

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

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
