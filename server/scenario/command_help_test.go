package scenario

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// `help` lists every command of the table with its usage and summary,
// every status with what may follow it, and how to open the console; an
// SSH session with no command and no terminal gets the same.
func TestCommandHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	for _, words := range [][]string{{"help"}, {"--help"}, {"-h"}, {}} {
		out, errOut, code := h.ssh("carol", words...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", words, code, errOut)
		}
		for _, c := range sshd.Commands() {
			if !strings.Contains(out, c.Usage) || !strings.Contains(out, c.Summary) {
				t.Errorf("%v lacks %s's usage or summary:\n%s", words, c.Name, out)
			}
		}
		for st := range store.Transitions() {
			if !strings.Contains(out, string(st)) {
				t.Errorf("%v lacks status %s", words, st)
			}
		}
		for _, want := range []string{"stale", "nothing (final)", "awaiting_approval  then: queued, rejected", "console"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", words, want, out)
			}
		}
	}
	for _, name := range []string{"rerun", "help"} {
		if lookupCommand(name) == nil {
			t.Errorf("no %s command in the table", name)
		}
	}
}

// `CMD --help`, `CMD -h` and `help CMD` print the command's usage, summary,
// help text and every flag it declares, on stdout, and exit 0, even with
// other words around them; the usage line names every flag.
func TestCommandHelpForEachCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	for _, c := range sshd.Commands() {
		fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
		c.DeclareFlags(fs)
		var flags []string
		fs.VisitAll(func(f *flag.Flag) { flags = append(flags, "--"+f.Name) })
		if c.JSON {
			flags = append(flags, "--json")
		}
		for _, f := range flags {
			if !strings.Contains(c.Usage, f) {
				t.Errorf("%s's usage line %q does not name its flag %s", c.Name, c.Usage, f)
			}
		}
		if c.Summary == "" || c.Help == "" || !strings.HasPrefix(c.Usage, c.Name) || !strings.Contains(c.Example, c.Name+" ") {
			t.Errorf("%s: usage %q, summary %q, help %q", c.Name, c.Usage, c.Summary, c.Help)
		}
		for _, words := range [][]string{{c.Name, "--help"}, {c.Name, "-h"}, {"help", c.Name}, {c.Name, "7", "--help"}} {
			out, errOut, code := h.ssh("carol", words...)
			if code != 0 || errOut != "" {
				t.Errorf("%v: exit %d, stderr %q", words, code, errOut)
				continue
			}
			want := append([]string{"usage: " + c.Usage, c.Summary, "flags:", "--help, -h", "example:\n  ssh -p 2222 HOST "}, flags...)
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%v lacks %q:\n%s", words, w, out)
				}
			}
		}
	}
}

// Malformed words exit 2 with one sentence on stderr that says what was
// wrong and where help is; nothing is written to stdout and nothing runs.
func TestCommandUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	cases := []struct {
		words []string
		want  string
	}{
		{[]string{"help", "nosuch"}, `no command "nosuch"; these are the commands`},
		{[]string{"help", "show", "log"}, "help takes at most COMMAND"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"show"}, "show takes one RUN; see `help show`"},
		{[]string{"show", "1", "2"}, "show takes one RUN"},
		{[]string{"runs", "extra"}, "runs takes no arguments"},
		{[]string{"show", "1", "--nosuch"}, "show: there is no flag --nosuch; see `help show`"},
		{[]string{"log", "--follow=maybe", "1"}, "log: --follow is a switch"},
		{[]string{"launch", "network", "--var", "region"}, `--var wants NAME=VALUE`},
		{[]string{"launch", "network", "--var", "a=1", "--var", "a=2"}, `variable "a" is given twice`},
		{[]string{"approve", "1", "--digest", "sha256:aa", "--digest", "sha256:bb"}, `--digest is given more than once`},
		{[]string{"launch", "network", "--wait", "--wait"}, `--wait is given more than once`},
		{[]string{"launch", "network", "--answers", "file.json"}, `--answers takes -`},
		{[]string{"launch", "network", "--dry-run", "--require-approval"}, "a dry run applies nothing"},
		{[]string{"approve", "1"}, "approve needs --digest sha256:HEX"},
		{[]string{"approve", "1", "--digest"}, "--digest needs a value"},
		{[]string{"rerun"}, "rerun takes one RUN"},
		{[]string{"rerun", "1", "--json=yes"}, "--json is a switch"},
		{[]string{"templates", "--wait"}, "there is no flag --wait"},
	}
	for _, c := range cases {
		out, errOut, code := h.ssh("alice", c.words...)
		if code != api.ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.words, code, out, errOut, c.want)
		}
		if first, _, _ := strings.Cut(errOut, "\n"); !strings.HasPrefix(first, "switchtender: ") || strings.Count(first, ". ") > 1 {
			t.Errorf("%v: first line %q is not one sentence", c.words, first)
		}
	}
	// An unknown command and an unknown help topic list the commands.
	for _, words := range [][]string{{"frobnicate"}, {"help", "nosuch"}} {
		_, errOut, _ := h.ssh("alice", words...)
		if !strings.Contains(errOut, lookupCommand("rerun").Usage) || !strings.Contains(errOut, lookupCommand("launch").Usage) {
			t.Errorf("%v does not list the commands:\n%s", words, errOut)
		}
	}
	if runs, err := h.db().ListRuns(); err != nil || len(runs) != 0 {
		t.Fatalf("malformed commands queued runs: %v %+v", err, runs)
	}
}

// lookupCommand is the SSH command called name (or by that alias), or nil.
func lookupCommand(name string) *sshd.CommandInfo {
	for _, c := range sshd.Commands() {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return &c
		}
	}
	return nil
}
