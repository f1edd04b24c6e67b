package sshd

import (
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"

	"github.com/switchtender/switchtender/store"
)

var auditCommand = command{
	name:    "audit",
	example: `ssh -p 2222 HOST audit --run 4 --json`,
	usage:   "audit [--run RUN] [--since TIME] [--json]",
	summary: "the audit trail: who launched, released, rejected, cancelled what, and when",
	help: `Every launch, release (with the plan's digest and the rules it released),
rejection, cancel, rerun, refusal and recovery action at start, oldest first.
Each entry carries the hash of the one before it (a chain): --json shows
seq, prev and hash; ` + "`switchtender audit verify`" + ` checks the whole chain
offline. --since takes RFC 3339 (2026-12-01T08:00:00Z) or a duration back
from now (90m). Only people with the approve role may read it.`,
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		run := fs.String("run", "", "only the events of run `RUN`")
		since := fs.String("since", "", "only events at or after `TIME` (RFC 3339, or a duration such as 24h)")
		return func(c *call) int { return c.audit(*run, *since) }
	},
}

// audit prints the audit trail for people with the approve role.
func (c *call) audit(run, since string) int {
	if c.id.Agent || !c.id.Has("approve") {
		return c.refuse(api.Errorf(api.ErrForbidden, "%s may not read the audit trail: only people with the approve role can", c.id.Name))
	}
	from, err := parseSince(since, time.Now())
	if err != nil {
		return c.usageErr("audit: %v", err)
	}
	events, err := c.s.AuditTrail(func(e store.AuditEvent) bool {
		return (run == "" || e.RunID == run) && !e.At.Before(from)
	})
	if err != nil {
		return c.refuse(err)
	}
	if c.json {
		if events == nil {
			events = []store.AuditEvent{}
		}
		return writeJSON(c.out, events)
	}
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tAT\tRUN\tACTOR\tACTION\tDETAIL")
	for _, e := range events {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.At.Format(time.RFC3339), e.RunID, screentext.Field(e.Actor), e.Action, screentext.Sentence(e.Detail))
	}
	tw.Flush()
	return exitOK
}

// parseSince reads --since: RFC 3339, or a duration back from now; "" is
// the beginning.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a time like 2026-12-01T08:00:00Z nor a duration like 24h", s)
}
