package sshd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpLogResourceLimit bounds the text of a run://N/log resource: a longer
// log gives its last part, after a line saying what was left out.
const mcpLogResourceLimit = 1 << 20

// addResources registers the resource templates run://{id} and
// run://{id}/log.
func (m *mcpSession) addResources() {
	m.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "run", Title: "A run", URITemplate: "run://{id}", MIMEType: "application/json",
		Description: "A run as show_run returns it (JSON, plan text masked). Subscribe to be notified when its status changes.",
	}, m.readResource)
	m.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "run-log", Title: "A run's log", URITemplate: "run://{id}/log", MIMEType: "text/plain",
		Description: "A run's masked log (the last 1 MiB of a longer one; read_log pages through all of it). Subscribe to be notified when the run's status changes.",
	}, m.readResource)
}

// readResource reads run://N (the run as show --json prints it) or
// run://N/log (its masked log).
func (m *mcpSession) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, isLog, ok := parseRunURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	r, err := m.s.Run(id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if isLog {
		text, err := m.logTail(id)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
	}
	b, err := json.Marshal(m.s.View(m.s.Refreshed(r), m.who, true))
	if err != nil {
		return nil, fmt.Errorf("encoding run %s: %w", id, err)
	}
	// jsonSafe as show --json: the text is JSON a reader sees as is, so a
	// hidden character in a value stays its \u escape.
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(jsonSafe(b))}}}, nil
}

// logTail is run id's masked log, or its last mcpLogResourceLimit bytes
// after a line that says how much was left out.
func (m *mcpSession) logTail(id string) (string, error) {
	size, err := m.s.LogSize(id)
	if err != nil {
		return "", fmt.Errorf("reading the log of run %s: %w", id, err)
	}
	from := max(0, size-mcpLogResourceLimit)
	text, _, err := readLogText(m.s, id, from, mcpLogResourceLimit)
	if err != nil {
		return "", err
	}
	if from > 0 {
		text = fmt.Sprintf("[the first %d bytes are left out; read_log reads them]\n", from) + text
	}
	return text, nil
}
