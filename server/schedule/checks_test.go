package schedule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// fakeChecks drives a Checks with no server: a clock the test moves,
// a run list the test edits, and a launch that records a queued check (or
// refuses with refuse, when set).
type fakeChecks struct {
	t        *testing.T
	now      time.Time
	runs     []store.Run
	launched []string // template names, in launch order
	refuse   error
	logs     bytes.Buffer
	c        *Checks
}

// newFakeChecks builds a schedule over templates (every one in project
// "infra"; command is its working directory) with the time zone loc.
func newFakeChecks(t *testing.T, start time.Time, loc *time.Location, templates ...*config.Template) *fakeChecks {
	f := &fakeChecks{t: t, now: start}
	cfg := &config.Config{Server: config.Server{TimeZone: loc}, Templates: map[string]*config.Template{}}
	for _, tp := range templates {
		tp.Project = "infra"
		cfg.Templates[tp.Name] = tp
	}
	f.c = NewChecks(cfg, slog.New(slog.NewTextHandler(&f.logs, nil)), Funcs{})
	f.c.now = func() time.Time { return f.now }
	f.c.listRuns = func() ([]store.Run, error) { return append([]store.Run(nil), f.runs...), nil }
	f.c.workdirOf = func(tp *config.Template) string { return "/checkout/" + tp.Command }
	f.c.launchCheck = func(name string) error {
		if f.refuse != nil {
			return f.refuse
		}
		tp := cfg.Templates[name]
		f.launched = append(f.launched, name)
		f.add(store.Run{Template: name, Project: tp.Project, Command: tp.Command, Workdir: "/checkout/" + tp.Command,
			Kind: store.KindCheck, Status: store.StatusQueued, CreatedAt: f.now, Requester: "schedule"})
		return nil
	}
	return f
}

// add stores a run with the next ID, newest first as ListRuns returns them.
func (f *fakeChecks) add(r store.Run) {
	r.ID = fmt.Sprint(len(f.runs) + 1)
	f.runs = append([]store.Run{r}, f.runs...)
}

// finish ends every pending check (they ran and succeeded).
func (f *fakeChecks) finish() {
	for i := range f.runs {
		if store.Kind(f.runs[i].Kind) == store.KindCheck && !store.Status(f.runs[i].Status).Final() {
			f.runs[i].Status = store.StatusSucceeded
		}
	}
}

// ticks moves the clock by step n times, ticking after each move, and
// returns how many checks were launched.
func (f *fakeChecks) ticks(n int, step time.Duration) int {
	before := len(f.launched)
	for range n {
		f.now = f.now.Add(step)
		f.c.Tick(context.Background())
	}
	return len(f.launched) - before
}

// TestScheduleNoPileUp is the check: a one-minute schedule over
// five minutes, the working directory held by a long run, queues no more
// than one check, with check_every and with check_cron alike.
func TestScheduleNoPileUp(t *testing.T) {
	start := time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)
	cron, err := config.ParseCron("* * * * *")
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []*config.Template{
		{Name: "net", Command: "net", CheckEvery: time.Minute},
		{Name: "net", Command: "net", CheckCron: cron},
	} {
		t.Run(scheduleText(tp), func(t *testing.T) {
			f := newFakeChecks(t, start, time.UTC, tp)
			// a long apply holds the working directory all along: the check
			// the schedule launches stays queued behind it
			f.add(store.Run{Template: "net", Project: "infra", Command: "net", Workdir: "/checkout/net",
				Kind: store.KindApply, Status: store.StatusRunning, CreatedAt: start.Add(-time.Hour)})
			f.c.Tick(context.Background())
			n := 1 + f.ticks(5*60/15, 15*time.Second) // every 15 s for five minutes
			if len(f.launched) != 1 || n != 1 {
				t.Fatalf("launched %d checks (%v) over five minutes with the working directory busy, want exactly 1", len(f.launched), f.launched)
			}
			// when the queued check has run, the next due one goes
			f.finish()
			if got := f.ticks(1, time.Minute); got != 1 {
				t.Errorf("after the pending check ended, a due check launched %d times, want 1", got)
			}
		})
	}

	// a check queued by hand (or before a restart) counts as pending: none
	// is added while it waits
	f := newFakeChecks(t, start, nil, &config.Template{Name: "net", Command: "net", CheckEvery: time.Minute})
	f.add(store.Run{Template: "net", Project: "infra", Command: "net", Kind: store.KindCheck,
		Status: store.StatusQueued, CreatedAt: start.Add(-time.Hour)})
	if got := f.ticks(20, 15*time.Second); got != 0 {
		t.Errorf("launched %d checks while one was queued, want 0", got)
	}
	// a check awaiting approval is pending as well
	f.runs[0].Status = store.StatusAwaitingApproval
	if got := f.ticks(4, 15*time.Second); got != 0 {
		t.Errorf("launched %d checks while one awaited approval, want 0", got)
	}
}

// TestScheduleSharedWorkdir: two templates of one working directory, both
// due, launch one check between them; the other waits its turn, and gets it
// next (the template checked longest ago goes first).
func TestScheduleSharedWorkdir(t *testing.T) {
	start := time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)
	f := newFakeChecks(t, start, nil,
		&config.Template{Name: "a", Command: "net", CheckEvery: time.Minute},
		&config.Template{Name: "b", Command: "net", CheckEvery: time.Minute},
		&config.Template{Name: "c", Command: "dns", CheckEvery: time.Minute})
	f.c.Tick(context.Background())
	if strings.Join(f.launched, ",") != "a,c" {
		t.Fatalf("first tick launched %v, want [a c]", f.launched)
	}
	if got := f.ticks(8, 15*time.Second); got != 0 {
		t.Errorf("launched %d more while both directories had a check queued", got)
	}
	f.finish()
	f.c.Tick(context.Background())
	if strings.Join(f.launched, ",") != "a,c,b,c" {
		t.Errorf("after the checks ended, launched %v, want b's turn in net and c again in dns: [a c b c]", f.launched)
	}
	f.finish()
	f.ticks(1, time.Minute)
	if strings.Join(f.launched, ",") != "a,c,b,c,a,c" {
		t.Errorf("then launched %v, want a's turn again: [a c b c a c]", f.launched)
	}
}

// TestScheduleMissedSlots: a day of missed slots while the server was down
// launches one check at start, not one per slot; and the next one comes at
// the next slot.
func TestScheduleMissedSlots(t *testing.T) {
	start := time.Date(2025, 1, 15, 10, 0, 20, 0, time.UTC)
	hourly, _ := config.ParseCron("0 * * * *")
	for _, tp := range []*config.Template{
		{Name: "net", Command: "net", CheckEvery: time.Hour},
		{Name: "net", Command: "net", CheckCron: hourly},
	} {
		t.Run(scheduleText(tp), func(t *testing.T) {
			f := newFakeChecks(t, start, time.UTC, tp)
			f.add(store.Run{Template: "net", Project: "infra", Command: "net", Kind: store.KindCheck,
				Status: store.StatusSucceeded, CreatedAt: start.Add(-25 * time.Hour)})
			f.c.Tick(context.Background())
			if len(f.launched) != 1 {
				t.Fatalf("at start after a day down, launched %d checks, want 1", len(f.launched))
			}
			f.finish() // even with the check over, nothing more is due
			if got := f.ticks(4*59, 15*time.Second); got != 0 {
				t.Errorf("launched %d more checks within the hour, want 0", got)
			}
			if got := f.ticks(8, 15*time.Second); got != 1 {
				t.Errorf("at the next hour launched %d, want 1", got)
			}
		})
	}

	// a template never checked is checked at the first tick
	f := newFakeChecks(t, start, nil, &config.Template{Name: "net", Command: "net", CheckEvery: 6 * time.Hour})
	f.c.Tick(context.Background())
	if len(f.launched) != 1 {
		t.Errorf("a template never checked launched %d at start, want 1", len(f.launched))
	}
}

// TestScheduleTimeZone: check_cron is read in the server's time_zone; a
// cron at 09:00 Europe/Paris fires at 08:00 UTC in winter.
func TestScheduleTimeZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	nine, _ := config.ParseCron("0 9 * * *")
	start := time.Date(2025, 1, 15, 7, 58, 0, 0, time.UTC)
	f := newFakeChecks(t, start, paris, &config.Template{Name: "net", Command: "net", CheckCron: nine})
	f.add(store.Run{Template: "net", Project: "infra", Command: "net", Kind: store.KindCheck,
		Status: store.StatusSucceeded, CreatedAt: time.Date(2025, 1, 14, 8, 0, 5, 0, time.UTC)})
	f.c.Tick(context.Background())
	if got := f.ticks(7, 15*time.Second); len(f.launched) != 0 || got != 0 { // up to 07:59:45 UTC
		t.Fatalf("launched %v before 08:00 UTC (09:00 Paris)", f.launched)
	}
	f.ticks(1, 15*time.Second) // 08:00:00 UTC
	if len(f.launched) != 1 {
		t.Fatalf("at 08:00 UTC (09:00 Paris) launched %d, want 1", len(f.launched))
	}
	if got := f.runs[0].CreatedAt; !got.Equal(time.Date(2025, 1, 15, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("check created at %s, want 08:00 UTC", got)
	}
	// the same schedule in UTC would wait for 09:00 UTC
	g := newFakeChecks(t, start, time.UTC, &config.Template{Name: "net", Command: "net", CheckCron: nine})
	g.add(store.Run{Template: "net", Project: "infra", Command: "net", Kind: store.KindCheck,
		Status: store.StatusSucceeded, CreatedAt: time.Date(2025, 1, 14, 9, 0, 5, 0, time.UTC)})
	g.c.Tick(context.Background())
	g.ticks(8, 15*time.Second) // to 08:00 UTC
	if len(g.launched) != 0 {
		t.Errorf("in UTC the 09:00 cron launched at %s", g.now)
	}
	g.ticks(4*60, 15*time.Second) // to 09:00 UTC
	if len(g.launched) != 1 || !g.runs[0].CreatedAt.Equal(time.Date(2025, 1, 15, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("in UTC the 09:00 cron launched %d, the last at %s; want 1 at 09:00 UTC", len(g.launched), g.runs[0].CreatedAt)
	}
}

// TestScheduleRefusalLogged: a refused check is retried every tick and
// logged once per template per hour.
func TestScheduleRefusalLogged(t *testing.T) {
	start := time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)
	f := newFakeChecks(t, start, nil,
		&config.Template{Name: "a", Command: "net", CheckEvery: time.Minute},
		&config.Template{Name: "b", Command: "dns", CheckEvery: time.Minute})
	var tries int
	f.refuse = errors.New("drift checks are not available in this version")
	inner := f.c.launchCheck
	f.c.launchCheck = func(name string) error { tries++; return inner(name) }
	f.c.Tick(context.Background())
	f.ticks(2*60*4-1, 15*time.Second) // to 1h59m45s
	if want := 2 * 2 * 60 * 4; tries != want {
		t.Errorf("tried %d launches, want %d (each template every tick)", tries, want)
	}
	out := f.logs.String()
	for _, name := range []string{"a", "b"} {
		if n := strings.Count(out, "template="+name+" "); n != 2 {
			t.Errorf("template %s refusal logged %d times in two hours, want 2:\n%s", name, n, out)
		}
	}
	if !strings.Contains(out, "not available in this version") {
		t.Errorf("the log does not give the refusal's reason:\n%s", out)
	}
	// once launches are accepted, a later refusal is logged at once
	f.refuse = nil
	f.ticks(1, 15*time.Second)
	f.finish()
	f.refuse = errors.New("refused again")
	f.ticks(4, 15*time.Second)
	if !strings.Contains(f.logs.String(), "refused again") {
		t.Errorf("a refusal after a launch was not logged:\n%s", f.logs.String())
	}
}

// TestScheduleStopsWithContext: nothing is launched once the context ends
// (Close cancels it), and run returns.
func TestScheduleStopsWithContext(t *testing.T) {
	f := newFakeChecks(t, time.Now(), nil, &config.Template{Name: "net", Command: "net", CheckEvery: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n := f.c.Tick(ctx); n != 0 || len(f.launched) != 0 {
		t.Errorf("a cancelled schedule launched %v", f.launched)
	}
	done := make(chan struct{})
	go func() { f.c.Run(ctx, time.Millisecond); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}
