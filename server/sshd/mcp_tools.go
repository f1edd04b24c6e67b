package sshd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// The MCP tools. Each calls the server method its SSH command calls (Launch,
// Cancel, Reconcile, Rerun; the store for reads) as the session's identity,
// and returns text for a model to read and structured content: a run is the
// object `show --json` prints. A refusal is a tool error carrying the
// server's sentence. There is deliberately no approve or reject tool.

// MCPRunArg names one run.
type MCPRunArg struct {
	Run string `json:"run" jsonschema:"the run's ID as launch and list_runs give it, a decimal number in a string, e.g. \"7\""`
}

// mcpLaunchArgs is what launch takes.
type mcpLaunchArgs struct {
	Template string                     `json:"template" jsonschema:"the template's name, as list_templates gives it"`
	Kind     string                     `json:"kind,omitempty"`
	Answers  map[string]json.RawMessage `json:"answers,omitempty"`
}

// mcpListRunsArgs is what list_runs takes.
type mcpListRunsArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"at most this many runs, newest first (default 50, at most 500)"`
}

// mcpLogArgs is what read_log takes.
type mcpLogArgs struct {
	Run    string `json:"run" jsonschema:"the run's ID, e.g. \"7\""`
	Offset int64  `json:"offset,omitempty" jsonschema:"the byte offset to read from: 0 at first, then the next_offset the previous call returned"`
}

// mcpCheckArg names a drift check.
type mcpCheckArg struct {
	Check string `json:"check" jsonschema:"the drift check run's ID (kind check) whose kept plan to propose, e.g. \"7\""`
}

// MCPTemplates is list_templates' result.
type MCPTemplates struct {
	Templates []templateView `json:"templates"`
}

// MCPWorkers is list_workers' result.
type MCPWorkers struct {
	Workers []api.WorkerView `json:"workers"`
}

// MCPRuns is list_runs' result.
type MCPRuns struct {
	Runs  []api.RunView `json:"runs"`
	Total int           `json:"total"` // how many runs there are in all
}

// MCPLog is read_log's result: masked log text from Offset to NextOffset.
type MCPLog struct {
	Run        string `json:"run"`
	Status     string `json:"status" jsonschema:"the run's status now"`
	Offset     int64  `json:"offset" jsonschema:"the byte offset text starts at"`
	NextOffset int64  `json:"next_offset" jsonschema:"the byte offset to read from next"`
	Size       int64  `json:"size" jsonschema:"the log's length in bytes so far"`
	More       bool   `json:"more" jsonschema:"more of the log is stored past next_offset now"`
	Finished   bool   `json:"finished" jsonschema:"the run no longer executes (it ended, or waits for a person), so its log grows no further for now"`
	Text       string `json:"text" jsonschema:"the log's text from offset to next_offset, secrets masked"`
}

// Bounds of list_runs and read_log.
const (
	mcpRunsDefault = 50
	mcpRunsMax     = 500
	mcpLogLimit    = 64 << 10 // bytes of log per read_log call
)

// addTools registers every tool on the session's server.
func (m *mcpSession) addTools() {
	addMCPTool(m, &mcp.Tool{Name: "list_templates", Title: "List templates", Description: descListTemplates,
		Annotations: readOnly()}, m.listTemplates)
	m.addLaunchTool()
	addMCPTool(m, &mcp.Tool{Name: "list_runs", Title: "List runs", Description: descListRuns,
		Annotations: readOnly()}, m.listRuns)
	addMCPTool(m, &mcp.Tool{Name: "show_run", Title: "Show a run", Description: descShowRun,
		Annotations: readOnly()}, m.showRun)
	addMCPTool(m, &mcp.Tool{Name: "read_log", Title: "Read a run's log", Description: descReadLog,
		InputSchema: logSchema(), Annotations: readOnly()}, m.readLog)
	addMCPTool(m, &mcp.Tool{Name: "cancel_run", Title: "Cancel a run", Description: descCancel,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true}}, m.cancel)
	addMCPTool(m, &mcp.Tool{Name: "reconcile", Title: "Propose a reconcile", Description: descReconcile}, m.reconcile)
	addMCPTool(m, &mcp.Tool{Name: "rerun", Title: "Rerun a run", Description: descRerun}, m.rerun)
	addMCPTool(m, &mcp.Tool{Name: "list_workers", Title: "List relay workers", Description: descListWorkers,
		Annotations: readOnly()}, m.listWorkers)
}

// listWorkers is `workers`: the relay workers, their pool, state, current
// run and last heartbeat.
func (m *mcpSession) listWorkers(_ context.Context, _ struct{}) (string, MCPWorkers, error) {
	vs := m.s.Workers()
	var b strings.Builder
	writeWorkerTable(&b, vs)
	return b.String(), MCPWorkers{Workers: api.OrEmpty(vs)}, nil
}

func readOnly() *mcp.ToolAnnotations { return &mcp.ToolAnnotations{ReadOnlyHint: true} }

// addMCPTool registers a tool whose handler h returns the text a model
// reads and the structured result; h's error becomes a tool error with the
// server's sentence (an internal error's detail goes to the operator log).
func addMCPTool[In, Out any](m *mcpSession, t *mcp.Tool, h func(context.Context, In) (string, Out, error)) {
	t.OutputSchema = outputSchema[Out]()
	mcp.AddTool(m.srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		text, out, err := h(ctx, in)
		if err != nil {
			var zero Out
			if api.ErrorCode(err) == "internal" {
				m.s.Logger().Error("MCP tool failed", "tool", t.Name, "identity", m.who.Name, "err", err)
			}
			return nil, zero, errors.New(api.UserMessage(err))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}

// outputSchemas holds each result type's schema, inferred once.
var outputSchemas sync.Map // reflect type name -> *jsonschema.Schema

// outputSchema is T's JSON schema with every object also allowed to be null
// (a Go nil map marshals as null), so results validate against it.
func outputSchema[T any]() *jsonschema.Schema {
	key := fmt.Sprintf("%T", *new(T))
	if s, ok := outputSchemas.Load(key); ok {
		return s.(*jsonschema.Schema)
	}
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: outputTypes})
	if err != nil {
		panic(fmt.Sprintf("schema of %s: %v", key, err)) // a programming error, caught by every test
	}
	nullableObjects(s, true)
	optionalRunFields(s)
	outputSchemas.Store(key, s)
	return s
}

// outputTypes are the schemas of types the inferred schema cannot follow:
// a change set's JSON comparison holds attributes, which may hold one.
var outputTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[planview.JSONDiff](): {
		Type:        "object",
		Description: "the structural comparison of two JSON documents held in strings",
		Properties: map[string]*jsonschema.Schema{
			"changes":     {Type: "array", Items: &jsonschema.Schema{Type: "object"}, Description: "the changed JSON paths, each an attribute change"},
			"format_only": {Type: "boolean", Description: "the documents are equal as JSON: only whitespace or key order differ"},
		},
	},
}

// nullableObjects lets every object schema below s (s itself unless top)
// be null.
func nullableObjects(s *jsonschema.Schema, top bool) {
	if s == nil {
		return
	}
	if s.Type == "object" && !top {
		s.Types, s.Type = []string{"null", "object"}, ""
	}
	for _, p := range s.Properties {
		nullableObjects(p, false)
	}
	nullableObjects(s.Items, false)
	nullableObjects(s.AdditionalProperties, false)
	for _, d := range s.Defs {
		nullableObjects(d, false)
	}
}

// contractOmits are the run object's fields the JSON contract leaves out
// until they are known (api.RunView's MarshalJSON): the schema inferred from
// the Go type would require them.
var contractOmits = []string{"exit_code", "started_at", "finished_at", "proposal", "check", "scan", "commit", "waiting", "stale_reason", "newer_proposal", "counts", "reconcile", "changes"}

// optionalRunFields drops contractOmits from the required properties of
// every run object (an object with an exit_code property) below s.
func optionalRunFields(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if _, ok := s.Properties["exit_code"]; ok {
		s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return slices.Contains(contractOmits, n) })
	}
	for _, p := range s.Properties {
		optionalRunFields(p)
	}
	optionalRunFields(s.Items)
	for _, d := range s.Defs {
		optionalRunFields(d)
	}
}

// launchSchema is launch's input schema: the kinds as an enum, answers as
// an object of JSON values.
func launchSchema() *jsonschema.Schema {
	s, err := jsonschema.For[mcpLaunchArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("launch schema: %v", err))
	}
	s.Properties["kind"] = &jsonschema.Schema{Type: "string", Enum: []any{"plan", "apply", "check"}, Default: json.RawMessage(`"apply"`),
		Description: `"plan": a dry run (tofu plan; changes nothing). "apply": plan, then apply once a person released the saved plan (an apply launched here always waits for a person). "check": a drift check (a plan with -detailed-exitcode that keeps the plan if it finds drift; see reconcile). Default "apply".`}
	s.Properties["answers"] = &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{},
		Description: `Survey answers by field name, as list_templates describes them: a string for string, choice and secret fields; a number, true/false, a list or an object for number, bool, list and map fields. A field left out takes its default; a required field (no default) must be answered. Secret answers are accepted and never shown back.`}
	return s
}

// logSchema is read_log's input schema: the offset is not negative.
func logSchema() *jsonschema.Schema {
	s, err := jsonschema.For[mcpLogArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("read_log schema: %v", err))
	}
	s.Properties["offset"].Minimum = new(0.0)
	return s
}

// listTemplates lists the templates and their survey fields.
func (m *mcpSession) listTemplates(_ context.Context, _ struct{}) (string, MCPTemplates, error) {
	out := MCPTemplates{Templates: []templateView{}}
	var b strings.Builder
	for _, t := range api.SortedTemplates(m.s.Config()) {
		v := templateView{Name: t.Name, Project: t.Project, Tool: t.Tool, Command: t.Command, Queue: t.Queue, Survey: []fieldView{}}
		fmt.Fprintf(&b, "%s\t%s %s in project %s\n", t.Name, t.Tool, t.Command, t.Project)
		for _, f := range t.Survey {
			fv := fieldView{Name: f.Name, Type: f.Type, Required: f.Required, Choices: f.Choices, Sensitive: f.Sensitive}
			if !f.Sensitive {
				fv.Default = f.Default
			}
			v.Survey = append(v.Survey, fv)
			writeField(&b, fv)
		}
		out.Templates = append(out.Templates, v)
	}
	if len(out.Templates) == 0 {
		b.WriteString("no templates are configured\n")
	}
	return b.String(), out, nil
}

// addLaunchTool registers launch with a handler that reads the raw
// arguments itself: the SDK's typed path would decode answers through
// float64 (losing digits), keep the last of a name given twice, and quote a
// wrongly typed value, a secret perhaps, in its validation error.
func (m *mcpSession) addLaunchTool() {
	t := &mcp.Tool{Name: "launch", Title: "Launch a run", Description: descLaunch,
		InputSchema: launchSchema(), OutputSchema: outputSchema[api.RunView]()}
	m.srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := launchArgs(req.Params.Arguments)
		var text string
		var run api.RunView
		if err == nil {
			text, run, err = m.launch(ctx, in)
		}
		clear(in.Answers)
		if err != nil {
			if api.ErrorCode(err) == "internal" {
				m.s.Logger().Error("MCP tool failed", "tool", t.Name, "identity", m.who.Name, "err", err)
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: api.UserMessage(err)}}}, nil
		}
		structured, err := json.Marshal(run)
		if err != nil {
			return nil, fmt.Errorf("encoding the run: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(structured)}, nil
	})
}

// launchArgs reads launch's arguments: template and kind as strings,
// answers as an object whose values stay as given (numbers keep their
// digits), a name given twice refused. No refusal quotes a value.
func launchArgs(raw json.RawMessage) (mcpLaunchArgs, error) {
	var in struct {
		Template json.RawMessage `json:"template"`
		Kind     json.RawMessage `json:"kind"`
		Answers  json.RawMessage `json:"answers"`
	}
	var out mcpLaunchArgs
	if err := json.Unmarshal(raw, &in); err != nil {
		return out, api.Errorf(api.ErrInvalid, "launch takes an object {\"template\": NAME, \"kind\": KIND, \"answers\": {...}}; the arguments given are not one (they are not repeated here)")
	}
	if json.Unmarshal(in.Template, &out.Template) != nil || out.Template == "" {
		return out, api.Errorf(api.ErrInvalid, "launch: \"template\" must be a template's name, a string (list_templates gives them)")
	}
	if len(in.Kind) > 0 && json.Unmarshal(in.Kind, &out.Kind) != nil {
		return out, api.Errorf(api.ErrInvalid, "launch: \"kind\" must be a string: \"plan\", \"apply\" or \"check\"")
	}
	if len(in.Answers) == 0 || string(in.Answers) == "null" {
		return out, nil
	}
	if json.Unmarshal(in.Answers, &out.Answers) != nil {
		return out, api.Errorf(api.ErrInvalid, "launch: \"answers\" must be an object of answers by field name (as list_templates describes them), not a string or a list; what was given is not repeated here, as it may hold a secret")
	}
	if name, dup := duplicateKey(in.Answers); dup {
		clear(out.Answers)
		return out, api.FieldErrorf(name, "answer %q is given twice; give it once", name)
	}
	return out, nil
}

// launch queues a run through Launch, as the launch command does. An apply
// is marked an AI proposal, so it waits for a person whatever the rules say.
func (m *mcpSession) launch(ctx context.Context, in mcpLaunchArgs) (string, api.RunView, error) {
	kind := store.Kind(in.Kind)
	if kind == "" {
		kind = store.KindApply
	}
	if kind != store.KindApply && kind != store.KindPlan && kind != store.KindCheck {
		return "", api.RunView{}, api.Errorf(api.ErrInvalid, "launch: unknown kind %q: give \"plan\", \"apply\" or \"check\"", in.Kind)
	}
	answers, err := mcpAnswers(m.s.Config().Templates[in.Template], in.Answers)
	clear(in.Answers)
	if err != nil {
		return "", api.RunView{}, err
	}
	req := api.LaunchRequest{Template: in.Template, Kind: kind, Answers: answers, AIProposal: kind == store.KindApply}
	run, err := m.s.Launch(ctx, m.who, req)
	clear(answers)
	if err != nil {
		return "", api.RunView{}, err
	}
	return m.runResult(run, false)
}

// listRuns lists runs, newest first, as `runs --json` does (no plan text).
func (m *mcpSession) listRuns(_ context.Context, in mcpListRunsArgs) (string, MCPRuns, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = mcpRunsDefault
	}
	limit = min(limit, mcpRunsMax)
	runs, err := m.s.ListRuns()
	if err != nil {
		return "", MCPRuns{}, fmt.Errorf("listing runs: %w", err)
	}
	out := MCPRuns{Runs: []api.RunView{}, Total: len(runs)}
	var b strings.Builder
	sw := newSafeWriter(&b)
	defer sw.Flush()
	for i, r := range runs {
		if i == limit {
			fmt.Fprintf(sw, "(%d older runs left out; raise limit to see them)\n", len(runs)-limit)
			break
		}
		v := m.s.View(m.s.Refreshed(r), m.who, false)
		out.Runs = append(out.Runs, v)
		writeRunHead(sw, v)
		writeHolds(sw, v)
	}
	if len(runs) == 0 {
		fmt.Fprintln(sw, "no runs yet")
	}
	sw.Flush()
	return b.String(), out, nil
}

// showRun is one run in detail, its masked plan text included, as `show`.
func (m *mcpSession) showRun(_ context.Context, in MCPRunArg) (string, api.RunView, error) {
	run, err := m.s.Run(in.Run)
	if err != nil {
		return "", api.RunView{}, err
	}
	return m.runResult(m.s.Refreshed(run), true)
}

// cancel cancels a run through Cancel: the caller's own runs, or any run
// for a person with the approve role.
func (m *mcpSession) cancel(ctx context.Context, in MCPRunArg) (string, api.RunView, error) {
	run, was, err := m.s.CancelRun(ctx, m.who, in.Run)
	if err != nil {
		return "", api.RunView{}, err
	}
	text, v, err := m.runResult(run, false)
	return cancelReply(run.ID, was, m.s.Config().Server.CancelGrace, false) + "\n" + text, v, err
}

// reconcile proposes applying the plan a drift check kept, through Reconcile.
func (m *mcpSession) reconcile(ctx context.Context, in mcpCheckArg) (string, api.RunView, error) {
	run, err := m.s.Reconcile(ctx, m.who, in.Check)
	if err != nil {
		return "", api.RunView{}, err
	}
	return m.runResult(run, false)
}

// rerun submits a run that ended again, through Rerun; a repeated apply is
// an AI proposal, as launch makes one.
func (m *mcpSession) rerun(ctx context.Context, in MCPRunArg) (string, api.RunView, error) {
	run, err := m.s.RerunAsAIProposal(ctx, m.who, in.Run)
	if err != nil {
		return "", api.RunView{}, err
	}
	return m.runResult(run, false)
}

// runResult is a run as a tool returns it: the text `show` (detail) or
// `runs` prints, and the object `show --json` prints.
func (m *mcpSession) runResult(r store.Run, detail bool) (string, api.RunView, error) {
	var b bytes.Buffer
	sw := newSafeWriter(&b)
	c := &call{s: m.s, id: m.who, out: sw}
	c.printRun(r, detail)
	sw.Flush()
	return b.String(), m.s.View(r, m.who, true), nil // the object show --json prints, plan text included
}

// mcpAnswers turns launch's answers (JSON values) into answers as typed, as
// `launch --answers -` does: a string is the answer itself, any other value
// its compact JSON text; a field of t that takes text must get a string.
// A value is never repeated in a refusal (it may be a secret).
func mcpAnswers(t *config.Template, raw map[string]json.RawMessage) (map[string]string, error) {
	out, quoted := map[string]string{}, map[string]bool{}
	for name, v := range raw {
		var s string
		if trimmed := bytes.TrimSpace(v); string(trimmed) != "null" && json.Unmarshal(v, &s) == nil {
			out[name], quoted[name] = s, true
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil || compact.String() == "null" {
			return nil, api.FieldErrorf(name, "answer %q is null or not JSON; give a value or leave it out (the value is not repeated here)", name)
		}
		out[name] = compact.String()
	}
	if name := unquotedString(t, out, quoted); name != "" {
		clear(out)
		return nil, api.FieldErrorf(name, "answer %q is not a JSON string, and its survey field wants text; give it as a string (the value is not repeated here)", name)
	}
	return out, nil
}

// The tools' descriptions, written for a model choosing among them.
const (
	descListTemplates = `List the templates runs can be launched from. Each has a name, the OpenTofu working directory it runs in, and its survey: the fields launch's "answers" take, each with its type (string, number, bool, list, map, choice), whether it is required (no default), its default, its choices, and whether it is sensitive (a secret: its default is never shown). Call this before launch.`
	descLaunch        = `Queue a run of a template: kind "plan" (a dry run: shows what would change, changes nothing), "apply" (plans, then applies the saved plan only after a person released it: an apply launched here always waits for a person), or "check" (a drift check). Answers are checked against the template's survey before anything is queued; a refusal names the field. Returns the run: its "id" (use it with show_run, read_log, cancel_run), its "status", and, when it is held ("awaiting_approval"), its "holds" with whom each waits for. An agent's run is usually held before anything plans, until a person releases it; nothing here can release it. Subscribe to the resource run://ID to be told when the status changes.`
	descListRuns      = `List runs, newest first (default 50), each as show_run returns it but without the plan text: id, status, template, kind, requester, message, holds and whom they wait for, counts. "total" is how many runs exist.`
	descShowRun       = `Show one run in detail: status and message, the variables (secret ones by name only), the decisions on it, findings of the configuration scan, and its proposal: the destroy count, the counts ("N to add, N to change, N to destroy"), addresses by action, each rule that holds it and whom it waits for ("waits_for"), the digest a person approves, OpenTofu's plan text with secrets masked, and "changes": the saved plan's change set, risk first (replaced and deleted resources first; each changed attribute before and after; a sensitive value only as "changed" with keyed fingerprints, never its value), left out when there is none. Statuses: queued, running, awaiting_approval (held for a person), succeeded, failed, cancelled, interrupted, rejected, refused, stale.`
	descReadLog       = `Read a run's log (OpenTofu's output, secrets masked) from a byte offset, at most 64 KiB per call. Start at offset 0 and pass back "next_offset" while "more" is true; when "finished" is true the run no longer executes. To wait for a run, subscribe to run://ID rather than calling this in a loop.`
	descCancel        = `Cancel a run: a queued one never starts, a running one's OpenTofu is interrupted (so it releases its state lock), a held one ends. You may cancel only runs you launched (a person with the approve role may cancel any). A run that ended cannot be cancelled.`
	descReconcile     = `Propose applying exactly the plan a drift check (a run of kind "check" that found drift) kept: creates a run of kind "reconcile" that is always held for a person, who releases it by its digest. Refused for a run that is not a check, a check that found no drift, one a newer check superseded, and one already reconciled.`
	descListWorkers   = `List the relay workers the control node has seen since it started: name, pool, version, state (idle, running, draining, disconnected), the run each holds a lease for, and when each was last heard from. Runs of a template whose queue belongs to a pool are planned and applied on these workers; show_run's "planned_by" and "applied_by" name them.`
	descRerun         = `Submit a run that ended (failed, stale, rejected, cancelled, ...) again as a new run with the same template, kind and answers; secret answers are reused without being shown. The new run says which run it repeats ("rerun_of"); it is checked and held as a launch is, and a repeated apply waits for a person.`
)

// readLog reads a run's masked log from an offset, bounded, with the offset
// to read from next.
func (m *mcpSession) readLog(_ context.Context, in mcpLogArgs) (string, MCPLog, error) {
	r, err := m.s.Run(in.Run)
	if err != nil {
		return "", MCPLog{}, err
	}
	size, err := m.s.LogSize(r.ID)
	if err != nil {
		return "", MCPLog{}, fmt.Errorf("reading the log of run %s: %w", r.ID, err)
	}
	if in.Offset < 0 || in.Offset > size {
		return "", MCPLog{}, api.Errorf(api.ErrInvalid, "offset %d is outside run %s's log, which holds %d bytes so far; start at 0, or at a next_offset read_log returned", in.Offset, r.ID, size)
	}
	text, next, err := readLogText(m.s, r.ID, in.Offset, mcpLogLimit)
	if err != nil {
		return "", MCPLog{}, err
	}
	out := MCPLog{Run: r.ID, Status: string(r.Status), Offset: in.Offset, NextOffset: next, Size: size,
		More: next < size, Finished: !store.Status(r.Status).Active(), Text: text}
	head := fmt.Sprintf("run %s (%s): log bytes %d to %d of %d; next_offset %d", r.ID, r.Status, in.Offset, next, size, next)
	if out.More {
		head += "; more follows: call read_log again with that offset"
	}
	return head + "\n" + text, out, nil
}

// readLogText returns at most limit bytes of run id's masked log from byte
// offset from, cut before a character it would split, and the offset after
// them.
func readLogText(s Service, id string, from int64, limit int) (string, int64, error) {
	chunks, err := s.ReadLog(id, from)
	if err != nil {
		return "", from, fmt.Errorf("reading the log of run %s: %w", id, err)
	}
	var b []byte
	for _, c := range chunks {
		if len(b) >= limit {
			break
		}
		b = append(b, c.Data...)
	}
	if len(b) > limit {
		n := limit
		for n > limit-utf8.UTFMax && n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
	}
	return string(b), from + int64(len(b)), nil
}
