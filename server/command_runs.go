package server

import (
	"fmt"
	"text/tabwriter"
	"time"
)

var runsCommand = command{
	name:    "runs",
	example: `ssh -p 2222 HOST runs --json`,
	usage:   "runs [--json]",
	summary: "list runs, newest first",
	help: `One line per run: its ID, status, template, kind, who asked and when.
A held plan whose state changed meanwhile is checked first and listed as
stale; "▶ you" after the status marks a held run you can release now.
--json prints each run as show --json does, without the plan text.`,
	json: true,
	bind: noFlags((*call).runs),
}

// runs lists every run, newest first.
func (c *call) runs() int {
	runs, err := c.s.db.ListRuns()
	if err != nil {
		return c.refuse(err)
	}
	views := make([]runView, 0, len(runs))
	for _, r := range runs {
		views = append(views, c.s.view(c.s.refreshed(r), c.id, false))
	}
	if c.json {
		return writeJSON(c.out, views)
	}
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tTEMPLATE\tKIND\tREQUESTER\tCREATED")
	for _, v := range views {
		who := v.Requester + " (" + requesterKind(v.RequesterKind) + ")"
		status := v.Status
		if v.WaitingForYou {
			status += " ▶ you"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, status, v.Template, v.Kind, who, v.CreatedAt.Format(time.RFC3339))
	}
	tw.Flush()
	return exitOK
}
