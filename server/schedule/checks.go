package schedule

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// refusalLogEvery is how often, at most, a template's refused scheduled
// check is written to the operator log (1 h): the launch is retried every
// tick, the log line is not repeated every tick.
const refusalLogEvery = time.Hour

// Checks launches the drift checks templates ask for with
// check_every or check_cron (docs/drift.md, "Scheduled drift checks"). Every tick
// it reads the runs and, for each scheduled template, launches a check when
// one is due and none is pending in the template's working directory:
//
//   - Due: with check_every, when the template's newest check was created
//     at least that long ago; with check_cron, when the expression's latest
//     firing at or before now (in the server's time_zone) is after the
//     newest check was created. A template never checked is due. Since only
//     the newest check counts, slots missed while the server was down add
//     up to one check at start, not one per slot.
//   - Pending: a check of the same working directory (by resolved path, or
//     by project and command) that is queued, running or awaiting approval.
//     A due check then waits for a later tick; it never queues a second
//     check behind the first. A working directory busy with another kind of
//     run does not stop the launch: the check queues behind that run, as
//     any run does, and counts as pending from then on.
//
// Everything it needs from the server is a function in Funcs, so tests
// drive Tick with a fake clock, fake runs and a fake launch.
type Checks struct {
	templates []*config.Template // the scheduled ones, by name
	loc       *time.Location     // check_cron's wall clock; nil means UTC
	log       *slog.Logger

	now         func() time.Time
	listRuns    func() ([]store.Run, error) // every run, any order
	workdirOf   func(t *config.Template) string
	launchCheck func(template string) error

	// refusedLogged is when each template's last refusal (or failure to
	// read the runs, under "") was logged; only Tick's goroutine uses it.
	refusedLogged map[string]time.Time
}

// Funcs are what Checks needs from the server.
type Funcs struct {
	ListRuns    func() ([]store.Run, error)     // every run, any order
	WorkdirOf   func(t *config.Template) string // t's resolved working directory, "" when it does not resolve
	LaunchCheck func(template string) error     // launches a drift check of template
}

// NewChecks builds the schedule of cfg's templates that set check_every or
// check_cron, logging to log and reaching the server through f.
func NewChecks(cfg *config.Config, log *slog.Logger, f Funcs) *Checks {
	c := &Checks{loc: cfg.Server.TimeZone, log: log, now: time.Now, refusedLogged: map[string]time.Time{},
		listRuns: f.ListRuns, workdirOf: f.WorkdirOf, launchCheck: f.LaunchCheck}
	for _, t := range cfg.Templates {
		if t.CheckEvery > 0 || t.CheckCron != nil {
			c.templates = append(c.templates, t)
		}
	}
	slices.SortFunc(c.templates, func(a, b *config.Template) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// Len is how many templates the schedule checks.
func (c *Checks) Len() int { return len(c.templates) }

// Run ticks at once, then every every, until ctx ends.
func (c *Checks) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		c.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick launches every due check whose working directory has none pending,
// and reports how many it launched.
func (c *Checks) Tick(ctx context.Context) int {
	if len(c.templates) == 0 || ctx.Err() != nil {
		return 0
	}
	now := c.now()
	runs, err := c.listRuns()
	if err != nil {
		if ctx.Err() == nil && c.shouldLog("", now) {
			c.log.Error("scheduled drift checks: reading the runs failed; retrying every tick", "err", err)
		}
		return 0
	}
	last, pending := checksOf(runs)
	launched := 0
	for _, t := range c.dueTemplates(last, now) {
		wd := c.workdirOf(t)
		if slices.ContainsFunc(pending, func(r store.Run) bool { return sameWorkdir(r, t, wd) }) {
			continue // waits its turn: due again at the next tick
		}
		if ctx.Err() != nil {
			return launched
		}
		if !c.launch(ctx, t, now) {
			continue
		}
		launched++
		// Until the next tick reads it, the new check is pending here too,
		// for another template of the same working directory.
		pending = append(pending, store.Run{Kind: store.KindCheck, Template: t.Name, Project: t.Project, Command: t.Command, Workdir: wd})
	}
	return launched
}

// checksOf returns, from runs, each template's newest check's creation and
// the checks still queued, running or awaiting approval.
func checksOf(runs []store.Run) (map[string]time.Time, []store.Run) {
	last := map[string]time.Time{}
	var pending []store.Run
	for _, r := range runs {
		if store.Kind(r.Kind) != store.KindCheck {
			continue
		}
		if r.CreatedAt.After(last[r.Template]) {
			last[r.Template] = r.CreatedAt
		}
		if st := store.Status(r.Status); st.Active() || st == store.StatusAwaitingApproval {
			pending = append(pending, r)
		}
	}
	return last, pending
}

// dueTemplates lists the templates due at now, oldest check first (never
// checked first, then by name), so templates sharing a working directory
// take turns.
func (c *Checks) dueTemplates(last map[string]time.Time, now time.Time) []*config.Template {
	var due []*config.Template
	for _, t := range c.templates {
		if c.due(t, last[t.Name], now) {
			due = append(due, t)
		}
	}
	slices.SortStableFunc(due, func(a, b *config.Template) int { return last[a.Name].Compare(last[b.Name]) })
	return due
}

// launch launches t's check, logging a refusal at most hourly; it reports
// whether the check was launched.
func (c *Checks) launch(ctx context.Context, t *config.Template, now time.Time) bool {
	if err := c.launchCheck(t.Name); err != nil {
		if ctx.Err() == nil && c.shouldLog(t.Name, now) {
			c.log.Warn("scheduled drift check refused; retrying every tick, logging this at most hourly",
				"template", t.Name, "err", err)
		}
		return false
	}
	delete(c.refusedLogged, t.Name)
	c.log.Info("scheduled drift check launched", "template", t.Name, "schedule", scheduleText(t))
	return true
}

// due reports whether template t, whose newest check was created at last
// (zero: never), should be checked at now.
func (c *Checks) due(t *config.Template, last, now time.Time) bool {
	if last.IsZero() {
		return true
	}
	if t.CheckCron != nil {
		prev := t.CheckCron.Prev(now, c.loc)
		return !prev.IsZero() && prev.After(last)
	}
	return !last.Add(t.CheckEvery).After(now)
}

// shouldLog reports whether a refusal for key may be logged at now (none
// logged in the last refusalLogEvery), and records it if so.
func (c *Checks) shouldLog(key string, now time.Time) bool {
	if at, ok := c.refusedLogged[key]; ok && now.Sub(at) < refusalLogEvery && !now.Before(at) {
		return false
	}
	c.refusedLogged[key] = now
	return true
}

// sameWorkdir reports whether run r works in template t's working
// directory: the same resolved path (wd, "" when it does not resolve now)
// or the same project and command.
func sameWorkdir(r store.Run, t *config.Template, wd string) bool {
	if wd != "" && r.Workdir == wd {
		return true
	}
	return r.Project == t.Project && r.Command == t.Command
}

// scheduleText is a template's schedule as configured, for the log.
func scheduleText(t *config.Template) string {
	if t.CheckCron != nil {
		return "check_cron = " + t.CheckCron.String()
	}
	return "check_every = " + t.CheckEvery.String()
}
