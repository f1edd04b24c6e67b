package sshd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"charm.land/ssh"
	"github.com/switchtender/switchtender/server/api"
)

// The SSH commands are a table (soft-serve's habit): each command is a
// value in its own file (command_launch.go, command_show.go, …) holding its
// name, usage line, one-line summary, help text and flags, with a small
// handler. This file holds the table, the dispatch, the flag parsing and
// the help the table gives; command_view.go holds how runs are printed.

// Exit codes of SSH commands ([api.ExitOK] and the others).
const (
	exitOK      = api.ExitOK
	exitRefused = api.ExitRefused
	exitUsage   = api.ExitUsage
)

// command is one SSH command as the table holds it.
type command struct {
	name    string   // what a user types
	aliases []string // other words that run it (help: --help, -h)
	usage   string   // the whole usage line, as help shows it
	summary string   // one line, for the list `help` prints
	help    string   // what else a user needs: behaviour, refusals, exit status
	example string   // one command line a user can copy, as `help CMD` shows it
	args    []string // positional arguments; one in [brackets] is optional
	json    bool     // the command takes --json
	// bind declares the command's own flags on fs and returns the handler,
	// which reads them once fs has parsed the command's words.
	bind func(fs *flag.FlagSet) handler
}

// handler carries out a parsed command and returns its exit status.
type handler func(c *call) int

// noFlags is bind for a command with no flags of its own.
func noFlags(h handler) func(*flag.FlagSet) handler {
	return func(*flag.FlagSet) handler { return h }
}

// call is one command being carried out: who asked, the positional
// arguments, whether JSON was asked for, and where output goes (both
// writers escape control characters).
type call struct {
	s      Service
	door   *Door // for what only the door knows: the MCP keepalive
	ctx    context.Context
	id     api.Identity
	cmd    *command
	args   []string // the positional arguments, counted against cmd.args
	json   bool
	in     io.Reader
	out    io.Writer
	errOut io.Writer
}

// commandTable is every SSH command, in the order `help` lists them. It is
// filled in init because the help command reads it.
var commandTable []*command

func init() {
	commandTable = []*command{
		&templatesCommand, &launchCommand, &runsCommand, &showCommand, &logCommand,
		&reconcileCommand, &approveCommand, &rejectCommand, &cancelCommand, &rerunCommand, &auditCommand, &workersCommand, &whoamiCommand, &mcpCommand, &helpCommand,
	}
}

// lookupCommand returns the command name or one of its aliases names, or nil.
func lookupCommand(name string) *command {
	for _, c := range commandTable {
		if c.name == name {
			return c
		}
		for _, a := range c.aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// runCommand carries out one SSH command for id, writing results to the
// session and refusals to the session's stderr, and returns the exit status.
func (d *Door) runCommand(sess ssh.Session, id api.Identity, args []string) int {
	return d.Command(withKeyOf(sess.Context(), sess), id, args, sess, sess, sess.Stderr())
}

// Command is runCommand without the session, for tests and reuse: args is
// the command's words (at least one), in is the session's standard input
// (launch --answers - reads it), out and errOut receive its output and
// its refusals, escaped so that nothing from a run can drive a terminal. It
// returns the exit status: exitOK, exitRefused or exitUsage.
func (d *Door) Command(ctx context.Context, id api.Identity, args []string, in io.Reader, out, errOut io.Writer) int {
	sout, serr := newSafeWriter(out), newSafeWriter(errOut)
	defer sout.Flush()
	defer serr.Flush()
	c := &call{s: d.svc, door: d, ctx: ctx, id: id, in: in, out: sout, errOut: serr}
	if len(args) == 0 {
		args = []string{"help"}
	}
	cmd := lookupCommand(args[0])
	if cmd == nil {
		fmt.Fprintf(serr, "switchtender: unknown command %q\n\n", args[0])
		writeCommandList(serr)
		return exitUsage
	}
	c.cmd = cmd
	return c.dispatch(args[1:])
}

// dispatch parses the command's words and calls its handler: `--help` or `-h`
// anywhere prints the command's help and exits 0; a malformed flag or the
// wrong number of arguments exits 2 with one sentence.
func (c *call) dispatch(words []string) int {
	fs := flag.NewFlagSet(c.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var asJSON *bool
	if c.cmd.json {
		asJSON = fs.Bool("json", false, "print JSON instead of text")
	}
	h := c.cmd.bind(fs)
	if c.cmd.json {
		c.json = asksJSON(fs, words) // so malformed words are refused in JSON too
	}
	onlyOnce(fs)
	pos, err := parse(fs, words, c.cmd.args)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandHelp(c.out, c.cmd)
		return exitOK
	}
	if err != nil {
		return c.usageErr("%v", err)
	}
	if min, max := argCounts(c.cmd.args); len(pos) < min || len(pos) > max {
		hint := ""
		if len(pos) > max {
			hint = fmt.Sprintf(" (got %d; a flag's value with spaces must be quoted for the server's split too, as in ssh HOST \"reject 4 --reason 'too risky'\")", len(pos))
		}
		return c.usageErr("%s takes %s%s", c.cmd.name, argsPhrase(c.cmd.args), hint)
	}
	c.args = pos
	c.json = asJSON != nil && *asJSON
	if arg, word := notARunNumber(c.cmd.args, pos); arg != "" {
		// Not found, as a run ID that is no canonical number is in every
		// door (MCP's tools and resources too), with what RUN is.
		return c.refuse(api.Errorf(api.ErrNotFound, "no run %q: %s is a run number such as 4 (`runs` lists them)", word, arg))
	}
	return h(c)
}

// asksJSON reports whether words ask for JSON as fs would parse them
// (--json, -json, --json=VALUE where VALUE is true as strconv.ParseBool
// reads it), before they are parsed: a word that is another flag's value
// or follows -- is no flag.
func asksJSON(fs *flag.FlagSet, words []string) bool {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" || !strings.HasPrefix(w, "-") || w == "-" {
			if w == "--" {
				return false
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if name == "json" {
			on, err := strconv.ParseBool(value)
			return !hasValue || (err == nil && on)
		}
		if f := fs.Lookup(name); f != nil && !hasValue && !isBool(f) {
			i++ // the next word is this flag's value, not a flag
		}
	}
	return false
}

// usageErr reports malformed words (one sentence pointing at the
// command's help; with --json the JSON error object, code "usage") and
// returns exitUsage.
func (c *call) usageErr(format string, args ...any) int {
	msg := fmt.Sprintf("%s; see `help %s`", fmt.Sprintf(format, args...), c.cmd.name)
	if c.json {
		writeJSONError(c.errOut, ErrCodeUsage, msg, "")
		return exitUsage
	}
	fmt.Fprintf(c.errOut, "switchtender: %s\n", msg)
	return exitUsage
}

// refuse reports a refusal as its one sentence (with --json the JSON error
// object with the error's code) and returns exitRefused; an internal
// error's detail goes to the operator log only.
func (c *call) refuse(err error) int {
	if c.json {
		var field string
		if e := (*api.Error)(nil); errors.As(err, &e) {
			field = e.Field
		}
		writeJSONError(c.errOut, api.ErrorCode(err), api.UserMessage(err), field)
	} else {
		fmt.Fprintf(c.errOut, "switchtender: %s\n", api.UserMessage(err))
	}
	c.s.Logger().Info("refusal", "command", c.cmd.name, "identity", c.id.Name, "agent", c.id.Agent, "code", api.ErrorCode(err), "reason", c.s.Scrub(api.UserMessage(err)))
	if api.ErrorCode(err) == "internal" {
		c.s.Logger().Error("command failed", "command", c.cmd.name, "identity", c.id.Name, "err", err)
	}
	return exitRefused
}

// arg returns the i-th positional argument, or "" when it was not given.
func (c *call) arg(i int) string {
	if i < len(c.args) {
		return c.args[i]
	}
	return ""
}

// parse parses flags that may stand before or after positional arguments
// and returns the positional ones. A malformed flag is an error naming the
// command (an unknown one as typed, with what was likely meant: see
// unknownFlag; posNames are the command's positional arguments);
// `-h`/`--help` is flag.ErrHelp.
func parse(fs *flag.FlagSet, args, posNames []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			if m := undefinedFlag.FindStringSubmatch(err.Error()); m != nil {
				return nil, fmt.Errorf("%s: %s", fs.Name(), unknownFlag(fs, args, m[1], posNames))
			}
			return nil, fmt.Errorf("%s: %s", fs.Name(), flagMessage(err))
		}
		if name := givenTwice(fs); name != "" {
			return nil, fmt.Errorf("%s: --%s is given more than once; give it once", fs.Name(), name)
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil // after --, every word is an argument
		}
		args = rest
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// onlyOnce makes every flag of fs that takes one value refuse a second
// one (`--digest A --digest B`), rather than silently keep the last.
// Repeatable flags implement repeatable.
func onlyOnce(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(repeatable); ok {
			return
		}
		if b, ok := f.Value.(boolFlag); ok && b.IsBoolFlag() {
			f.Value = &onceBool{once{Value: f.Value, name: f.Name}}
			return
		}
		f.Value = &once{Value: f.Value, name: f.Name}
	})
}

// repeatable marks a flag that may be given more than once (--var).
type repeatable interface{ Repeatable() }

type boolFlag interface{ IsBoolFlag() bool }

// isBool reports whether f takes no value (a bool flag).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(boolFlag)
	return ok && b.IsBoolFlag()
}

// once refuses a flag's second value.
type once struct {
	flag.Value
	name       string
	set, twice bool
}

// Set records a second value as a repetition (parse reports it, so the
// flag package never quotes the value) and passes the first on.
func (o *once) Set(s string) error {
	if o.set {
		o.twice = true
		return nil
	}
	o.set = true
	return o.Value.Set(s)
}

// givenTwice names the first flag of fs given more than once, or "".
func givenTwice(fs *flag.FlagSet) string {
	name := ""
	fs.VisitAll(func(f *flag.Flag) {
		switch v := f.Value.(type) {
		case *once:
			if v.twice && name == "" {
				name = f.Name
			}
		case *onceBool:
			if v.twice && name == "" {
				name = f.Name
			}
		}
	})
	return name
}

// flagPatterns turn the flag package's errors into this project's words:
// flags are written with two dashes, and a value is never quoted.
var flagPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^flag needs an argument: -+(.*)$`), "--$1 needs a value, as in --$1=VALUE"},
	{regexp.MustCompile(`^invalid boolean flag ([^:]*):.*$`), "--$1 is a switch: give it alone, or as --$1=true or --$1=false"},
	{regexp.MustCompile(`^invalid boolean value .* for -+([^:]*):.*$`), "--$1 is a switch: give it alone, or as --$1=true or --$1=false"},
	{regexp.MustCompile(`^invalid value .* for flag -+([^:]*): (.*)$`), "--$1: $2"},
}

// flagMessage rewrites an error of the flag package (see flagPatterns).
func flagMessage(err error) string {
	msg := err.Error()
	for _, p := range flagPatterns {
		if p.re.MatchString(msg) {
			return p.re.ReplaceAllString(msg, p.with)
		}
	}
	return msg
}

type onceBool struct{ once }

func (o *onceBool) IsBoolFlag() bool { return true }

// notARunNumber finds, among the positional arguments pos given to a
// command taking names, one that should be a run number (RUN, CHECK) and
// is not a number at all: it returns that argument's name and the word
// ("", "" when there is none). A number that is no run is for the
// command to refuse ("no run").
func notARunNumber(names, pos []string) (name, word string) {
	for i, w := range pos {
		if i >= len(names) {
			break
		}
		if n := strings.Trim(names[i], "[]"); (n == "RUN" || n == "CHECK") && strings.Trim(w, "0123456789") != "" {
			return n, w
		}
	}
	return "", ""
}

// argCounts returns how many positional arguments a command needs at least
// and takes at most; an argument in [brackets] is optional.
func argCounts(args []string) (min, max int) {
	for _, a := range args {
		if !strings.HasPrefix(a, "[") {
			min++
		}
	}
	return min, len(args)
}

// argsPhrase says what positional arguments a command takes, for a
// refusal: "no arguments", "one RUN", "at most one COMMAND".
func argsPhrase(args []string) string {
	switch min, max := argCounts(args); {
	case max == 0:
		return "no arguments"
	case min == 0:
		return "at most " + strings.Trim(strings.Join(args, " "), "[]")
	default:
		return "one " + strings.Join(args, " ")
	}
}

// writeCommandList writes every command's usage and summary, from the table.
func writeCommandList(w io.Writer) {
	fmt.Fprintln(w, "Switchtender commands (ssh -p PORT HOST COMMAND):")
	for _, c := range commandTable {
		fmt.Fprintf(w, "  %s\n      %s\n", c.usage, c.summary)
	}
	fmt.Fprintln(w, "`help COMMAND` or `COMMAND --help` says more about one.")
}

// writeCommandHelp writes one command's usage, summary, help text and
// flags (as the command declares them), for `help CMD` and `CMD --help`.
func writeCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.usage, c.summary)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.help))
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.json {
		fs.Bool("json", false, "print JSON instead of text")
	}
	c.bind(fs)
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		fmt.Fprintf(w, "  --%-20s %s\n", f.Name+name, usage)
	})
	fmt.Fprintf(w, "  --%-20s %s\n", "help, -h", "this help")
	fmt.Fprintf(w, "\nexample:\n  %s\n", c.example)
}

// writeJSON prints v as indented JSON and returns exitOK (exitRefused when
// it cannot). encoding/json escapes C0 controls; jsonSafe escapes what else
// a terminal would act on, so the output stays valid JSON (it bypasses the
// text escaping of the safe writer).
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

// CommandInfo is one SSH command as the table holds it, for help pages
// and tests: its words, its help and the flags it declares.
type CommandInfo struct {
	Name, Usage, Summary, Help, Example string
	Aliases, Args                       []string
	JSON                                bool // it takes --json
	// DeclareFlags declares the command's own flags on fs.
	DeclareFlags func(fs *flag.FlagSet)
}

// Commands lists every SSH command, in the order `help` lists them.
func Commands() []CommandInfo {
	out := make([]CommandInfo, 0, len(commandTable))
	for _, c := range commandTable {
		bind := c.bind
		out = append(out, CommandInfo{Name: c.name, Usage: c.usage, Summary: c.summary, Help: c.help, Example: c.example,
			Aliases: c.aliases, Args: c.args, JSON: c.json, DeclareFlags: func(fs *flag.FlagSet) { bind(fs) }})
	}
	return out
}
