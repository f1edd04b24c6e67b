package server

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"charm.land/ssh"

	"github.com/switchtender/switchtender/store"
)

// Exit codes of SSH commands.
const (
	exitOK      = 0
	exitRefused = 1 // a refusal or a run that did not succeed (--wait)
	exitUsage   = 2 // the command's words are off
)

const commandHelp = `Switchtender commands (ssh -p PORT HOST COMMAND):
  templates [--json]                         list templates and their survey fields
  launch TEMPLATE [--dry-run] [--var NAME=VALUE]... [--require-approval] [--ai-proposal] [--wait] [--json]
                                             queue a run (an apply, or a plan with --dry-run)
  runs [--json]                              list runs, newest first
  show RUN [--json]                          a run, its proposal and masked plan text
  log RUN [--follow]                         a run's masked log (--follow: until it stops)
  approve RUN --digest sha256:HEX [--json]   release exactly the held plan with that digest
  reject RUN [--reason TEXT]                 end a held run
  cancel RUN                                 stop a run (tofu gets an interrupt first)
Connect with a terminal and no command for the console.
`

// varsFlag collects repeated --var NAME=VALUE.
type varsFlag map[string]string

func (v varsFlag) String() string { return "" }
func (v varsFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	if _, dup := v[name]; dup {
		return fmt.Errorf("variable %q given twice", name)
	}
	v[name] = value
	return nil
}

// parse parses flags that may stand before or after positional arguments;
// a malformed flag is reported as one sentence on the flag set's command.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("%s: %v; see `help`", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// runCommand carries out one SSH command for id, writing results to out and
// refusals to the session's stderr, and returns the exit status.
func (s *Server) runCommand(sess ssh.Session, id Identity, args []string) int {
	return s.command(sess.Context(), id, args, sess, sess.Stderr())
}

// command is runCommand without the session, for tests and reuse.
func (s *Server) command(ctx context.Context, id Identity, args []string, out, errOut io.Writer) int {
	// Everything printed passes through printable: run text must not drive
	// the reader's terminal.
	sout, serr := newSafeWriter(out), newSafeWriter(errOut)
	defer sout.Flush()
	defer serr.Flush()
	out, errOut = sout, serr
	name, rest := args[0], args[1:]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	usage := func(err error) int {
		fmt.Fprintf(errOut, "switchtender: %v\n", err)
		return exitUsage
	}
	refuse := func(err error) int {
		fmt.Fprintf(errOut, "switchtender: %s\n", UserMessage(err))
		if ErrorCode(err) == "internal" {
			s.log.Error("command failed", "command", name, "identity", id.Name, "err", err)
		}
		return exitRefused
	}
	one := func(pos []string, what string) (string, bool) {
		if len(pos) != 1 {
			fmt.Fprintf(errOut, "switchtender: %s takes one %s; see `help`\n", name, what)
			return "", false
		}
		return pos[0], true
	}
	// runArg parses the flags declared so far and the one RUN argument.
	runArg := func() (string, bool) {
		pos, err := parse(fs, rest)
		if err != nil {
			usage(err)
			return "", false
		}
		return one(pos, "RUN")
	}
	switch name {
	case "help", "--help", "-h":
		fmt.Fprint(out, commandHelp)
		return exitOK
	case "templates":
		if _, err := parse(fs, rest); err != nil {
			return usage(err)
		}
		return s.cmdTemplates(out, *asJSON)
	case "launch":
		vars := varsFlag{}
		fs.Var(vars, "var", "a survey answer NAME=VALUE (repeatable)")
		dry := fs.Bool("dry-run", false, "plan only: preview the change without touching infrastructure")
		reqApproval := fs.Bool("require-approval", false, "the apply its plan proposes waits for a person")
		ai := fs.Bool("ai-proposal", false, "mark the apply as proposed by an AI")
		wait := fs.Bool("wait", false, "stream the log and wait until the run ends or is held")
		pos, err := parse(fs, rest)
		if err != nil {
			return usage(err)
		}
		tmpl, ok := one(pos, "TEMPLATE")
		if !ok {
			return exitUsage
		}
		kind := KindApply
		if *dry {
			kind = KindPlan
			if *reqApproval || *ai {
				return usage(errors.New("launch: --require-approval and --ai-proposal ask that an apply wait for a person; a dry run applies nothing, so drop one or the other"))
			}
		}
		run, err := s.Launch(ctx, id, LaunchRequest{Template: tmpl, Kind: kind, Answers: vars, RequireApproval: *reqApproval, AIProposal: *ai})
		if err != nil {
			return refuse(err)
		}
		if !*wait {
			return s.printRun(out, run, *asJSON, false)
		}
		if !*asJSON {
			fmt.Fprintf(out, "run %s queued (%s of %s)\n", run.ID, run.Kind, run.Template)
			if err := s.FollowLog(ctx, run.ID, 0, func(c store.Chunk) error { _, err := out.Write(c.Data); return err }); err != nil {
				return refuse(err)
			}
		} else if err := s.FollowLog(ctx, run.ID, 0, func(store.Chunk) error { return nil }); err != nil {
			return refuse(err)
		}
		run, err = s.db.GetRun(run.ID)
		if err != nil {
			return refuse(err)
		}
		code := s.printRun(out, run, *asJSON, false)
		if statusOf(run) != StatusSucceeded && statusOf(run) != StatusAwaitingApproval {
			code = exitRefused
		}
		return code
	case "runs":
		if _, err := parse(fs, rest); err != nil {
			return usage(err)
		}
		runs, err := s.db.ListRuns()
		if err != nil {
			return refuse(err)
		}
		if *asJSON {
			views := make([]runView, 0, len(runs))
			for _, r := range runs {
				views = append(views, viewOf(r, false))
			}
			return writeJSON(out, views)
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTATUS\tTEMPLATE\tKIND\tREQUESTER\tCREATED")
		for _, r := range runs {
			who := r.Requester
			if r.RequesterKind == "agent" {
				who += " (agent)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Template, r.Kind, who, r.CreatedAt.Format(time.RFC3339))
		}
		tw.Flush()
		return exitOK
	case "show":
		rid, ok := runArg()
		if !ok {
			return exitUsage
		}
		run, err := s.getRun(rid)
		if err != nil {
			return refuse(err)
		}
		return s.printRun(out, run, *asJSON, true)
	case "log":
		follow := fs.Bool("follow", false, "keep streaming until the run stops")
		rid, ok := runArg()
		if !ok {
			return exitUsage
		}
		if _, err := s.getRun(rid); err != nil {
			return refuse(err)
		}
		write := func(c store.Chunk) error { _, err := out.Write(c.Data); return err }
		if *follow {
			if err := s.FollowLog(ctx, rid, 0, write); err != nil {
				return refuse(err)
			}
			return exitOK
		}
		chunks, err := s.db.ReadLog(rid, 0)
		if err != nil {
			return refuse(err)
		}
		for _, c := range chunks {
			write(c)
		}
		return exitOK
	case "approve":
		digest := fs.String("digest", "", "the plan digest being released, sha256:HEX (from `show RUN`)")
		rid, ok := runArg()
		if !ok {
			return exitUsage
		}
		if *digest == "" {
			fmt.Fprintf(errOut, "switchtender: approve needs --digest sha256:HEX, the digest of the plan you release; `show %s` gives it\n", rid)
			return exitUsage
		}
		run, err := s.Approve(ctx, id, rid, *digest)
		if err != nil {
			return refuse(err)
		}
		return s.printRun(out, run, *asJSON, false)
	case "reject":
		reason := fs.String("reason", "", "why (shown to the requester)")
		rid, ok := runArg()
		if !ok {
			return exitUsage
		}
		if *reason == "" {
			*reason = "no reason given"
		}
		run, err := s.Reject(ctx, id, rid, *reason)
		if err != nil {
			return refuse(err)
		}
		return s.printRun(out, run, *asJSON, false)
	case "cancel":
		rid, ok := runArg()
		if !ok {
			return exitUsage
		}
		run, err := s.Cancel(ctx, id, rid)
		if err != nil {
			return refuse(err)
		}
		return s.printRun(out, run, *asJSON, false)
	}
	fmt.Fprintf(errOut, "switchtender: unknown command %q\n\n%s", name, commandHelp)
	return exitUsage
}

// runView is a run as commands show it: never the sealed answers, and the
// plan text only where asked for.
type runView struct {
	store.Run
	SealedVars []byte `json:"sealed_vars,omitempty"`
	Waiting    string `json:"waiting,omitempty"`
}

func viewOf(r store.Run, withPlan bool) runView {
	r.SealedVars = nil
	if r.Proposal != nil && !withPlan {
		p := *r.Proposal
		p.PlanText = ""
		r.Proposal = &p
	}
	v := runView{Run: r}
	if statusOf(r) == StatusAwaitingApproval && r.Proposal != nil {
		v.Waiting = fmt.Sprintf("approve %s --digest %s", r.ID, r.Proposal.Digest)
	}
	return v
}

// writeJSON prints v as indented JSON. encoding/json escapes C0 controls;
// jsonSafe escapes what else a terminal would act on, so the output stays
// valid JSON (it bypasses the text escaping of printable).
func writeJSON(out io.Writer, v any) int {
	if sw, ok := out.(*safeWriter); ok {
		sw.Flush()
		out = sw.w
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return exitRefused
	}
	if _, err := out.Write(append(jsonSafe(b), '\n')); err != nil {
		return exitRefused
	}
	return exitOK
}

// printRun prints a run for people, or as JSON.
func (s *Server) printRun(out io.Writer, r store.Run, asJSON, detail bool) int {
	if asJSON {
		return writeJSON(out, viewOf(r, detail))
	}
	fmt.Fprintf(out, "run %s: %s\n", r.ID, r.Status)
	fmt.Fprintf(out, "  template %s (%s in %s, %s), %s by %s\n", r.Template, r.Command, r.Project, r.Tool, r.Kind, requestedHow(r))
	if r.Message != "" {
		fmt.Fprintf(out, "  %s\n", oneLine(r.Message))
	}
	if !detail {
		return exitOK
	}
	var names []string
	for k := range r.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(out, "  var %s = %s\n", k, oneLine(r.Vars[k]))
	}
	for _, k := range r.SecretVars {
		fmt.Fprintf(out, "  var %s = (sensitive)\n", k)
	}
	fmt.Fprintf(out, "  created %s", r.CreatedAt.Format(time.RFC3339))
	if !r.FinishedAt.IsZero() {
		fmt.Fprintf(out, ", finished %s", r.FinishedAt.Format(time.RFC3339))
	}
	if r.ExitCode >= 0 && (statusOf(r) == StatusSucceeded || statusOf(r) == StatusFailed) {
		fmt.Fprintf(out, ", exit code %d", r.ExitCode)
	}
	fmt.Fprintln(out)
	for _, a := range r.Approvals {
		fmt.Fprintf(out, "  %s (%s stage) by %s at %s %s %s\n", a.Decision, a.Stage, a.By, a.At.Format(time.RFC3339), a.Digest, oneLine(a.Reason))
	}
	if p := r.Proposal; p != nil {
		fmt.Fprintf(out, "proposal (%s stage), requested by %s\n", p.Stage, p.Requested)
		fmt.Fprintf(out, "  digest   %s\n", p.Digest)
		if p.Stage == "plan" {
			fmt.Fprintf(out, "  DESTROYS %d   add %d   change %d   replace %d   forget %d\n", p.Destroy, p.Add, p.Change, p.Replace, p.Forget)
			var actions []string
			for a := range p.Addresses {
				actions = append(actions, a)
			}
			sort.Strings(actions)
			for _, a := range actions {
				fmt.Fprintf(out, "  %s: %s\n", a, strings.Join(p.Addresses[a], ", "))
			}
		}
		for _, h := range p.Holds {
			fmt.Fprintf(out, "  held by %s: %s\n", h.Rule, h.Reason)
		}
		for _, h := range p.Refusals {
			fmt.Fprintf(out, "  refused by %s: %s\n", h.Rule, h.Reason)
		}
		for _, f := range p.Findings {
			fmt.Fprintf(out, "  finding %s: %s\n", f.Address, f.Reason)
		}
		if statusOf(r) == StatusAwaitingApproval && p.Stage == "request" {
			fmt.Fprintf(out, "  nothing has planned yet; release the request (then it plans) with: approve %s --digest %s\n", r.ID, p.Digest)
		} else if statusOf(r) == StatusAwaitingApproval {
			fmt.Fprintf(out, "  release exactly this plan with: approve %s --digest %s\n", r.ID, p.Digest)
		}
		if p.PlanText != "" {
			fmt.Fprintf(out, "plan (masked):\n%s", p.PlanText)
		}
	}
	return exitOK
}

// cmdTemplates lists templates with their survey fields.
func (s *Server) cmdTemplates(out io.Writer, asJSON bool) int {
	type field struct {
		Name      string   `json:"name"`
		Type      string   `json:"type"`
		Default   any      `json:"default,omitempty"`
		Required  bool     `json:"required,omitempty"`
		Choices   []string `json:"choices,omitempty"`
		Sensitive bool     `json:"sensitive,omitempty"`
	}
	type tv struct {
		Name    string  `json:"name"`
		Project string  `json:"project"`
		Tool    string  `json:"tool"`
		Command string  `json:"command"`
		Queue   string  `json:"queue"`
		Survey  []field `json:"survey"`
	}
	var list []tv
	for _, t := range sortedTemplates(s.cfg) {
		v := tv{Name: t.Name, Project: t.Project, Tool: t.Tool, Command: t.Command, Queue: t.Queue}
		for _, f := range t.Survey {
			fv := field{Name: f.Name, Type: f.Type, Required: f.Required, Choices: f.Choices, Sensitive: f.Sensitive}
			if !f.Sensitive {
				fv.Default = f.Default
			}
			v.Survey = append(v.Survey, fv)
		}
		list = append(list, v)
	}
	if asJSON {
		return writeJSON(out, list)
	}
	for _, t := range list {
		fmt.Fprintf(out, "%s\t%s %s in project %s (queue %s)\n", t.Name, t.Tool, t.Command, t.Project, t.Queue)
		for _, f := range t.Survey {
			d := "required"
			if !f.Required {
				d = "default " + oneLine(answerText(f.Default))
				if f.Sensitive {
					d = "default (sensitive)"
				}
			}
			if len(f.Choices) > 0 {
				d += "; one of " + strings.Join(f.Choices, ", ")
			}
			if f.Sensitive {
				d += "; sensitive"
			}
			fmt.Fprintf(out, "  --var %s=<%s>  %s\n", f.Name, f.Type, d)
		}
	}
	return exitOK
}
