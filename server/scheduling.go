package server

import (
	"context"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/schedule"
	"github.com/switchtender/switchtender/store"
)

// The queue and the drift-check schedule live in server/schedule; this is
// how the server starts them.

// checkScheduleTick is how often the check schedule looks for due drift
// checks (15 s). A check therefore starts up to one tick after its time.
// Tests shorten it before Start.
var checkScheduleTick = 15 * time.Second

// scheduleIdentity is who scheduled checks are launched as: `runs` and
// `show` name "schedule" as their requester.
var scheduleIdentity = Identity{Name: "schedule", Roles: []string{config.RoleLaunch}}

// startCheckSchedule starts the check schedule on s, returning it (nil when
// no template has a schedule). Its goroutine ticks at once, so a check
// missed while the server was down starts now, then every
// checkScheduleTick, until ctx ends (Close cancels it).
func (s *Server) startCheckSchedule(ctx context.Context) *schedule.Checks {
	c := schedule.NewChecks(s.config(), s.log, schedule.Funcs{
		ListRuns: s.db.ListRuns,
		WorkdirOf: func(t *config.Template) string {
			wd, _ := s.workdir(store.Run{Project: t.Project, Command: t.Command})
			return wd
		},
		LaunchCheck: func(template string) error {
			_, err := s.Launch(ctx, scheduleIdentity, LaunchRequest{Template: template, Kind: KindCheck})
			return err
		},
	})
	if c.Len() == 0 {
		return nil
	}
	go c.Run(ctx, checkScheduleTick)
	return c
}

// restartCheckSchedule stops the check schedule, if any, and starts one on
// the configuration now; Start and Reload call it.
func (s *Server) restartCheckSchedule() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runCtx == nil || s.closed {
		return
	}
	if s.checksStop != nil {
		s.checksStop()
	}
	ctx, cancel := context.WithCancel(s.runCtx)
	s.checksStop = cancel
	s.checks = s.startCheckSchedule(ctx)
}
