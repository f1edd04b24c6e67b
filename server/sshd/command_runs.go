package sshd

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"

	"github.com/switchtender/switchtender/store"
)

var runsCommand = command{
	name:    "runs",
	example: `ssh -p 2222 HOST runs --status awaiting_approval --template network --limit 5`,
	usage:   "runs [--status S[,S…]] [--template T] [--limit N] [--json]",
	summary: "list runs, newest first",
	help: `One line per run: its ID, status, template, kind, who asked and when.
A held plan whose state changed meanwhile is checked first and listed as
stale; "▶ you" after the status marks a held run you can release now.
--status keeps runs with one of the statuses given (comma-separated),
--template runs of that template, --limit the newest N of what is left.
--json prints each run as show --json does, without the plan text; [] when
none match.`,
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		f := &runsFilter{}
		fs.StringVar(&f.status, "status", "", "only runs with this `STATUS` (or any of S1,S2,…)")
		fs.StringVar(&f.template, "template", "", "only runs of this `TEMPLATE`")
		fs.StringVar(&f.limit, "limit", "", "at most `N` runs, the newest")
		return func(c *call) int { return c.runs(f) }
	},
}

// runsFilter is what runs' flags ask for, as given.
type runsFilter struct{ status, template, limit string }

// parsed checks the filter against the known statuses and the runs there
// are, and returns the statuses wanted (nil: all) and the limit (0: none).
func (f *runsFilter) parsed(runs []store.Run, templates []string) ([]store.Status, int, error) {
	var statuses []store.Status
	for _, s := range strings.Split(f.status, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(allStatuses(), store.Status(s)) {
			return nil, 0, api.Errorf(api.ErrInvalid, "--status %q is not a status a run can have; give one of %s", s, statusList())
		}
		statuses = append(statuses, store.Status(s))
	}
	if f.template != "" && !slices.Contains(templates, f.template) &&
		!slices.ContainsFunc(runs, func(r store.Run) bool { return r.Template == f.template }) {
		return nil, 0, api.Errorf(api.ErrNotFound, "--template %q: there is no such template and no run of one; `templates` lists them", f.template)
	}
	limit := 0
	if f.limit != "" {
		n, err := strconv.Atoi(f.limit)
		if err != nil || n < 1 {
			return nil, 0, api.Errorf(api.ErrInvalid, "--limit %q: give a whole number of runs, 1 or more", f.limit)
		}
		limit = n
	}
	return statuses, limit, nil
}

// allStatuses lists every status a run can have, in the state machine's order.
func allStatuses() []store.Status {
	return []store.Status{store.StatusQueued, store.StatusRunning, store.StatusAwaitingApproval, store.StatusSucceeded, store.StatusFailed,
		store.StatusCancelled, store.StatusInterrupted, store.StatusRejected, store.StatusRefused, store.StatusStale}
}

// statusList is allStatuses as a phrase for a refusal.
func statusList() string {
	var names []string
	for _, s := range allStatuses() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// runs lists runs, newest first, filtered as asked.
func (c *call) runs(f *runsFilter) int {
	runs, err := c.s.ListRuns()
	if err != nil {
		return c.refuse(err)
	}
	var names []string
	for _, t := range c.s.Config().Templates {
		names = append(names, t.Name)
	}
	statuses, limit, err := f.parsed(runs, names)
	if err != nil {
		return c.refuse(err)
	}
	views := make([]api.RunView, 0, len(runs))
	for _, r := range runs {
		if limit > 0 && len(views) == limit {
			break
		}
		if f.template != "" && r.Template != f.template {
			continue
		}
		v := c.s.View(c.s.Refreshed(r), c.id, false)
		if len(statuses) > 0 && !slices.Contains(statuses, store.Status(v.Run.Status)) {
			continue
		}
		views = append(views, v)
	}
	if c.json {
		return writeJSON(c.out, views)
	}
	writeRunList(c.out, views)
	return exitOK
}

// writeRunList writes runs as a table, one line each; when any run belongs
// to a pull request, a last column names it (repository#number and the
// short head commit, screentext.PullRequestRef).
func writeRunList(w io.Writer, views []api.RunView) {
	prs := slices.ContainsFunc(views, func(v api.RunView) bool { return v.PullRequest != nil })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "RUN\tSTATUS\tTEMPLATE\tKIND\tREQUESTER\tCREATED"
	if prs {
		head += "\tPULL REQUEST"
	}
	fmt.Fprintln(tw, head)
	for _, v := range views {
		who := screentext.Field(v.Requester) + " (" + api.RequesterKind(string(v.RequesterKind)) + ")"
		status := v.Status
		if v.WaitingForYou {
			status += " ▶ you"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", v.ID, status, screentext.Field(v.Template), v.Kind, who, v.CreatedAt.Format(time.RFC3339))
		if pr := v.PullRequest; pr != nil {
			line += "\t" + screentext.PullRequestRef(pr.Repository, pr.Number, pr.HeadSHA)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
