package sshd

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

var launchCommand = command{
	name:    "launch",
	example: `ssh -p 2222 HOST launch network --var region=eu-west-1 --wait`,
	usage:   "launch TEMPLATE [--dry-run [--ref REF] | --check] [--var NAME=VALUE]... [--answers -] [--require-approval] [--ai-proposal] [--wait] [--json]",
	summary: "queue a run: an apply, with --dry-run a plan, with --check a drift check",
	help: `Answers (--var) are checked against the template's survey before anything
is queued: a missing required answer, an unknown field or a value of the
wrong type is refused, naming the field. An apply that a rule holds waits
for approval; --require-approval and --ai-proposal make it wait for a
person whatever the rules say (they cannot go with --dry-run).

--answers - reads a JSON object of answers from standard input, so a secret
never stands on a command line (shell history, ps, CI logs):
  echo '{"db_password":"..."}' | ssh HOST launch app --answers -
It combines with --var for the others; a name in both is refused. Strings,
numbers, bools, lists and maps are given as JSON values.

--check runs a drift check: a plan with -detailed-exitcode. No changes ends
it "no drift"; changes keep its plan sealed and show the drift per address
and attribute (show RUN), and ` + "`reconcile RUN`" + ` proposes applying exactly
that plan. A later check of the same working directory drops the plan an
earlier one kept.

--dry-run --ref REF is a pull request's plan: it plans the commit REF
(a branch, tag or SHA the checkout's git repository has) in a private
tree, never touching the checkout, against the state the checkout's runs
use, and records the commit's SHA. Its configuration and every module it
calls are scanned first; a plan that would run more than a read (an
external, aws_lambda_invocation or local_command data source, an http
data source that writes, an external encryption key provider, anything
the scan cannot read) is refused, naming each finding, and no tofu plan
starts.

--wait streams the masked log until the run ends or is held, then prints
the run; it exits 1 unless the run succeeded or waits for approval.`,
	args: []string{"TEMPLATE"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		f := launchFlags{vars: &varsFlag{m: map[string]string{}}}
		fs.Var(f.vars, "var", "a survey answer `NAME=VALUE` (repeatable)")
		fs.StringVar(&f.answers, "answers", "", "read survey answers as a JSON object from standard input (`-`); for secrets")
		fs.BoolVar(&f.dry, "dry-run", false, "plan only: preview the change without touching infrastructure")
		fs.StringVar(&f.ref, "ref", "", "with --dry-run: plan the commit `REF` (branch, tag or SHA) as a pull request's plan")
		fs.BoolVar(&f.check, "check", false, "a drift check: plan, and keep the plan sealed if it finds drift")
		fs.BoolVar(&f.requireApproval, "require-approval", false, "the apply its plan proposes waits for a person")
		fs.BoolVar(&f.ai, "ai-proposal", false, "mark the apply as proposed by an AI (it waits for a person)")
		fs.BoolVar(&f.wait, "wait", false, "stream the log and wait until the run ends or is held")
		return func(c *call) int { return c.launch(&f) }
	},
}

// launchFlags are launch's flags once parsed.
type launchFlags struct {
	vars                *varsFlag
	answers             string // "-": a JSON object of answers on standard input
	dry, check          bool
	requireApproval, ai bool
	wait                bool
	ref                 string
}

// varsFlag collects repeated --var NAME=VALUE. Set never fails, so the
// flag package never quotes a value (it may be a secret) in an error; the
// first problem is kept in err, naming the variable only.
type varsFlag struct {
	m   map[string]string
	err error
}

func (v *varsFlag) String() string { return "" }

// Repeatable marks --var as a flag given once per answer.
func (v *varsFlag) Repeatable() {}

// Set adds one NAME=VALUE.
func (v *varsFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	switch {
	case v.err != nil:
	case !ok:
		v.err = errors.New("--var wants NAME=VALUE, and one was given without =; write --var NAME=VALUE (NAME= for an empty answer); what was given is not repeated here, as it may be a secret")
	case name == "":
		v.err = errors.New("--var wants NAME=VALUE, and one was given without a name before =; the value is not repeated here")
	case v.has(name):
		v.err = fmt.Errorf("variable %q is given twice", name)
	default:
		v.m[name] = value
	}
	return nil
}

func (v *varsFlag) has(name string) bool { _, ok := v.m[name]; return ok }

// launch queues a run of the template named by the argument.
func (c *call) launch(f *launchFlags) int {
	kind := store.KindApply
	if f.dry {
		kind = store.KindPlan
		if f.requireApproval || f.ai {
			return c.usageErr("launch: --require-approval and --ai-proposal ask that an apply wait for a person; a dry run applies nothing, so drop one or the other")
		}
	}
	if f.ref != "" && !f.dry {
		return c.usageErr("launch: --ref plans a pull request's commit, which only a dry run does; add --dry-run")
	}
	if f.check {
		if f.dry {
			return c.usageErr("launch: --dry-run and --check are two kinds of run; give one")
		}
		kind = store.KindCheck
	}
	fromVar := map[string]bool{}
	for name := range f.vars.m {
		fromVar[name] = true
	}
	answers, code := c.answers(f)
	if code != exitOK {
		return code
	}
	run, err := c.s.Launch(c.ctx, c.id, api.LaunchRequest{Template: c.arg(0), Kind: kind, Answers: answers,
		RequireApproval: f.requireApproval, AIProposal: f.ai, Ref: f.ref})
	clear(answers)
	if err != nil {
		return c.refuse(c.quotingHint(err, fromVar))
	}
	return c.queued(run, f.wait)
}

// queued prints a run just queued (by launch or rerun). With wait it first
// streams the run's masked log (text only) until the run ends or is held,
// and exits 1 unless it succeeded or waits for approval.
func (c *call) queued(run store.Run, wait bool) int {
	if !wait {
		return c.printRun(run, false)
	}
	if !c.json {
		fmt.Fprintf(c.out, "run %s queued (%s of %s)\n", run.ID, run.Kind, run.Template)
	}
	run, err := c.follow(run.ID, 0)
	if err != nil {
		return c.refuse(err)
	}
	code := c.printRun(run, false)
	if st := store.Status(run.Status); st != store.StatusSucceeded && st != store.StatusAwaitingApproval {
		code = exitRefused
	}
	return code
}

// follow streams run id's masked log from byte offset from (text only;
// with --json nothing) until the run ends or is held, and returns the run
// as it is then.
func (c *call) follow(id string, from int64) (store.Run, error) {
	write := func(store.Chunk) error { return nil }
	if !c.json {
		write = func(ch store.Chunk) error { _, err := c.out.Write(ch.Data); return err }
	}
	if err := c.s.FollowLog(c.ctx, id, from, write); err != nil {
		return store.Run{}, err
	}
	return c.s.Run(id)
}

// logSize is how many bytes run id's log holds now (0 when it cannot tell).
func logSize(s Service, id string) int64 {
	chunks, err := s.ReadLog(id, 0)
	if err != nil || len(chunks) == 0 {
		return 0
	}
	last := chunks[len(chunks)-1]
	return last.Offset + int64(len(last.Data))
}

// quotingHint adds to a refused --var answer for a list or map field why
// it most likely failed and how to give it: SSH sends the command as one
// line that the server splits again, so the JSON's double quotes were
// eaten by the second split unless quoted twice.
func (c *call) quotingHint(err error, fromVar map[string]bool) error {
	var e *api.Error
	t := c.s.Config().Templates[c.arg(0)]
	if !errors.As(err, &e) || e.Field == "" || !fromVar[e.Field] || t == nil {
		return err
	}
	for _, f := range t.Survey {
		if f.Name != e.Field || (f.Type != config.TypeList && f.Type != config.TypeMap) {
			continue
		}
		example := `["a","b"]`
		if f.Type == config.TypeMap {
			example = `{"team":"infra"}`
		}
		hint := fmt.Sprintf(" Over SSH the command line is split twice, by your shell and again by the server, so a JSON %s must be quoted for both: ssh HOST \"launch %s --var '%s=%s'\" (single quotes inside double quotes), or give it on standard input with --answers -.",
			f.Type, t.Name, f.Name, strings.ReplaceAll(example, `"`, `\"`))
		return &api.Error{Code: e.Code, Msg: strings.TrimRight(e.Msg, ".") + "." + hint, Field: e.Field}
	}
	return err
}
