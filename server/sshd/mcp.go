package sshd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchtender/switchtender/server/api"
)

// MCP over SSH (docs/mcp.md): `ssh -p PORT HOST mcp` speaks the Model Context
// Protocol on the session's standard input and output (the stdio
// transport: newline-delimited JSON-RPC), with the official Go SDK. The
// key decides the caller, as for every other command; each session gets an
// MCP server of its own bound to that identity. Its tools (mcp_tools.go)
// call the same server methods as the SSH commands, and there is no tool
// that approves or rejects: releasing a plan stays a person's act. Runs and
// their logs are resources (mcp_resources.go) whose subscribers are told
// when a run changes status.

var mcpCommand = command{
	name:    "mcp",
	usage:   "mcp",
	summary: "speak the Model Context Protocol on standard input and output, for AI agents",
	example: `ssh -p 2222 HOST mcp   # run by the MCP client, which speaks JSON-RPC on it`,
	help: `For an MCP client: configure the server as a plain command,
  {"command": "ssh", "args": ["-p", "2222", "HOST", "mcp"]}
and the client speaks JSON-RPC on the session (the stdio transport). The key
decides who the caller is, exactly as for the other commands.

Tools: list_templates, launch, list_runs, show_run, read_log, cancel_run,
reconcile, rerun. There is no approve or reject tool, for anyone: releasing
a plan stays a person's act, in the console or with approve over SSH. An
apply launched over MCP is an AI proposal: it waits for a person whatever
the rules say, and an agent's run is held before anything plans unless an
exemption covers it. Resources run://N and run://N/log can be subscribed
to; a subscriber is notified when the run changes status.

The server pings the client; a client that answers no ping within the SSH
idle timeout is disconnected.`,
	bind: noFlags((*call).mcp),
}

// MCPMaxMessage bounds one JSON-RPC message from the client, in bytes.
const MCPMaxMessage = 2 << 20

// mcpSchemas caches the tools' input schemas across sessions.
var mcpSchemas = mcp.NewSchemaCache()

// mcp serves MCP on the session until the client goes away.
func (c *call) mcp() int {
	out := c.out
	if sw, ok := out.(*safeWriter); ok {
		sw.Flush()
		out = sw.w // JSON-RPC is escaped per message instead (jsonSafeWriter)
	}
	if err := c.door.ServeMCP(c.ctx, c.id, c.in, out); err != nil {
		c.s.Logger().Error("MCP session failed", "identity", c.id.Name, "err", err)
		return exitRefused
	}
	return exitOK
}

// ServeMCP serves the Model Context Protocol for who, reading JSON-RPC from
// in and writing it to out (the stdio transport), until the client closes
// in, ctx ends, or the client answers no keepalive ping. It returns nil
// when the session ended that way, and an error only when it could not
// start.
func (d *Door) ServeMCP(ctx context.Context, who api.Identity, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newMCPSession(d.svc, who, d.mcpKeepAlive())
	go m.notifyChanges(ctx)
	flow := newMCPFlow()
	defer flow.releaseReader()
	go func() { <-ctx.Done(); flow.releaseReader() }()
	t := &mcp.IOTransport{Reader: io.NopCloser(flow.reader(in)), Writer: jsonSafeWriter{out, flow}, MaxLineLength: MCPMaxMessage}
	err := m.srv.Run(ctx, t)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	d.log.Info("MCP session ended", "identity", who.Name, "err", err)
	return nil
}

// mcpKeepAlive is how often the server pings an MCP client: half the SSH
// idle timeout, so a client that never answers is gone by that timeout
// (each ping waits half the interval), while a live client's answers keep
// its connection open across long waits.
func (d *Door) mcpKeepAlive() time.Duration {
	idle := d.lim.Idle
	if idle <= 0 {
		idle = api.DefaultSSHIdleTimeout
	}
	return max(idle/2, 100*time.Millisecond)
}

// jsonSafeWriter escapes, in each JSON-RPC message written (the transport
// writes one message per Write), what a terminal would act on: the
// session may be a person's terminal.
type jsonSafeWriter struct {
	w    io.Writer
	flow *mcpFlow // told of each message written
}

func (j jsonSafeWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(jsonSafe(p)); err != nil {
		return 0, err
	}
	if j.flow != nil {
		j.flow.wrote()
	}
	return len(p), nil
}

func (j jsonSafeWriter) Close() error { return nil }

// mcpSession is one MCP session: the caller's identity, its MCP server, and
// the runs it subscribed to with the status it was last told.
type mcpSession struct {
	s   Service
	who api.Identity
	srv *mcp.Server

	mu    sync.Mutex
	subs  map[string]map[string]bool // run ID -> subscribed URIs
	nsubs int                        // subscribe calls not yet unsubscribed, at most mcpMaxSubscriptions
	seen  map[string]string          // run ID -> status when last notified (or subscribed)
}

// newMCPSession builds the MCP server for one session of who: tools,
// resource templates, subscriptions.
func newMCPSession(s Service, who api.Identity, keepAlive time.Duration) *mcpSession {
	m := &mcpSession{s: s, who: who, subs: map[string]map[string]bool{}, seen: map[string]string{}}
	m.srv = mcp.NewServer(&mcp.Implementation{Name: "switchtender", Title: "Switchtender", Version: "1"}, &mcp.ServerOptions{
		Instructions:       mcpInstructions,
		KeepAlive:          keepAlive,
		SubscribeHandler:   m.subscribe,
		UnsubscribeHandler: m.unsubscribe,
		SchemaCache:        mcpSchemas,
		Capabilities:       &mcp.ServerCapabilities{},
	})
	m.addTools()
	m.addResources()
	return m
}

// mcpInstructions tell a model what the server is for and what it will not do.
const mcpInstructions = `Switchtender runs OpenTofu for a team. Use list_templates to see what can be launched and the answers each survey takes, launch to queue a plan (kind "plan"), an apply or a drift check, show_run and read_log to follow a run, and subscribe to run://N to be notified when run N changes status. Applies launched here wait for a person to weigh the plan; nothing here approves or rejects a run: tell the user which run waits and that a person releases it with approve over SSH or in the console.`

// runURI matches run://N and run://N/log.
var runURI = regexp.MustCompile(`^run://([1-9][0-9]{0,18})(/log)?$`)

// parseRunURI returns the run ID of run://N or run://N/log and whether it
// is the log.
func parseRunURI(uri string) (id string, log, ok bool) {
	m := runURI.FindStringSubmatch(uri)
	if m == nil {
		return "", false, false
	}
	return m[1], m[2] != "", true
}

// subscribe records a subscription to run://N or run://N/log, refusing a
// URI that names no run.
func (m *mcpSession) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	id, _, ok := parseRunURI(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	r, err := m.s.Run(id)
	if err != nil {
		return mcp.ResourceNotFoundError(uri)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nsubs >= mcpMaxSubscriptions {
		return fmt.Errorf("this session holds %d subscriptions, the most one may; unsubscribe from runs that ended first", m.nsubs)
	}
	m.nsubs++
	if m.subs[id] == nil {
		m.subs[id] = map[string]bool{}
		m.seen[id] = string(r.Status)
	}
	m.subs[id][uri] = true
	return nil
}

// mcpMaxSubscriptions bounds the subscriptions one MCP session holds (each
// listen of the newer protocol parks a handler until it ends).
const mcpMaxSubscriptions = 256

// unsubscribe forgets a subscription.
func (m *mcpSession) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	id, _, ok := parseRunURI(req.Params.URI)
	if !ok {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nsubs = max(m.nsubs-1, 0)
	delete(m.subs[id], req.Params.URI)
	if len(m.subs[id]) == 0 {
		delete(m.subs, id)
		delete(m.seen, id)
	}
	return nil
}

// notifyChanges sends resources/updated for every subscribed URI of a run
// whose status changed, whenever the broker says some run changed, until
// ctx ends. Changes coalesce: a subscriber is told at least once per
// change it did not see, and reads the status then.
func (m *mcpSession) notifyChanges(ctx context.Context) {
	ch, stop := m.s.WatchRuns()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
		}
		for _, uri := range m.changedURIs() {
			if err := m.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				m.s.Logger().Info("MCP resource notification failed", "identity", m.who.Name, "uri", uri, "err", err)
			}
		}
	}
}

// changedURIs returns the subscribed URIs of runs whose status changed
// since last told, and records the new statuses.
func (m *mcpSession) changedURIs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var uris []string
	for id, set := range m.subs {
		r, err := m.s.GetRun(id)
		if err != nil || string(r.Status) == m.seen[id] {
			continue
		}
		m.seen[id] = string(r.Status)
		for uri := range set {
			uris = append(uris, uri)
		}
	}
	return uris
}
