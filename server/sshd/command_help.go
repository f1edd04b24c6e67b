package sshd

import (
	"fmt"
	"io"
	"strings"

	"github.com/switchtender/switchtender/store"
)

var helpCommand = command{
	name:    "help",
	example: `ssh -p 2222 HOST help launch`,
	aliases: []string{"--help", "-h"},
	usage:   "help [COMMAND]",
	summary: "these commands and the statuses a run goes through; with COMMAND, that command's usage, flags and help",
	help: `Without COMMAND: every command, then every status a run can have and
what may follow it. With COMMAND: its usage line, what it does and its
flags (the same as COMMAND --help). An unknown COMMAND exits 2.`,
	args: []string{"[COMMAND]"},
	bind: noFlags((*call).help),
}

// help prints the command list and the statuses, or one command's help.
func (c *call) help() int {
	if name := c.arg(0); name != "" {
		cmd := lookupCommand(name)
		if cmd == nil {
			fmt.Fprintf(c.errOut, "switchtender: no command %q; these are the commands:\n\n", name)
			writeCommandList(c.errOut)
			return exitUsage
		}
		writeCommandHelp(c.out, cmd)
		return exitOK
	}
	writeGeneralHelp(c.out)
	return exitOK
}

// writeGeneralHelp writes the command list, the run statuses with what may
// follow each, and how to open the console.
func writeGeneralHelp(w io.Writer) {
	writeCommandList(w)
	fmt.Fprintf(w, "\nRun statuses, and what may follow each:\n%s", statusHelp())
	fmt.Fprintln(w, "\nRefusals print one sentence on stderr and exit 1; malformed words exit 2.")
	fmt.Fprintln(w, "With --json, a refusal is {\"error\": {\"code\", \"message\"}} on stderr, with the same exit status.")
	fmt.Fprintln(w, "log --follow and approve --wait exit 0 when the run succeeded, 3 when it waits for approval, 1 otherwise.")
	fmt.Fprintln(w, "Connect with a terminal and no command for the console.")
}

// statusHelp is the README's table of statuses, for `help`: what each means
// and what may follow it.
func statusHelp() string {
	var b strings.Builder
	for _, st := range []store.Status{store.StatusQueued, store.StatusRunning, store.StatusAwaitingApproval, store.StatusSucceeded,
		store.StatusFailed, store.StatusCancelled, store.StatusInterrupted, store.StatusRejected, store.StatusRefused, store.StatusStale} {
		next := "nothing (final)"
		if n := st.Next(); len(n) > 0 {
			var names []string
			for _, x := range n {
				names = append(names, string(x))
			}
			next = strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "  %-18s then: %s\n", st, next)
	}
	return b.String()
}
