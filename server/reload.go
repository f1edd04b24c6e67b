package server

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/oplog"
	"github.com/switchtender/switchtender/store"
)

// liveConfig is one configuration with the rules compiled from it; Reload
// replaces it whole, so a reader that loads it once sees one consistent
// configuration.
type liveConfig struct {
	cfg        *config.Config
	rules      []*gate.Rule
	exemptions []*gate.Exemption
	scrubber   *mask.Masker // the configuration's secrets, for scrub
}

func newLiveConfig(cfg *config.Config) *liveConfig {
	rules, ex := buildRules(context.Background(), cfg)
	return &liveConfig{cfg: cfg, rules: rules, exemptions: ex, scrubber: oplog.NewScrubber(cfg)}
}

// config is the configuration now. A caller that reads it more than once
// for one decision keeps the pointer rather than calling again.
func (s *Server) config() *config.Config { return s.live.Load().cfg }

// currentRules are the gate rules of the configuration now.
func (s *Server) currentRules() []*gate.Rule { return s.live.Load().rules }

// Reload replaces the configuration with cfg, which the caller loaded
// (a configuration that does not load never reaches here: the caller logs
// its errors and the old one stays). It is judged first as `check` and
// serve judge it (judge.go), with the very rules it will gate with: on an
// error it returns a *ReloadRefused naming every one, logs "reload
// refused", and the configuration in force stays, untouched. Users and
// keys, rules and policies, templates, credentials, projects and notify
// blocks take effect for what starts after it — a queued run is decided again
// when it starts, and the operator log names each queued run whose start
// the reload changes; the server block does not
// (listen addresses, data directory, keys and limits need a restart: a
// change there is logged and ignored). Running runs go on as they
// started; a held proposal keeps the holds it was decided with, and the
// audit trail says so per held run.
func (s *Server) Reload(cfg *config.Config) error {
	old := s.config()
	next := *cfg
	next.Server = old.Server
	live := newLiveConfig(&next)
	found := judge(judging{cfg: &next, environ: s.env, rules: live.rules, ssh: s.sshLimits})
	if errs := Errors(found); len(errs) > 0 {
		refused := &ReloadRefused{Problems: errs}
		s.log.Error("reload refused: the configuration has errors serve refuses; the old one stays", "errors", refused.sentences())
		return refused
	}
	if changed := serverChanges(old.Server, cfg.Server); len(changed) > 0 {
		s.log.Warn("reload: the server block changed; those settings take effect at the next restart", "settings", changed)
	}
	prev := s.live.Load()
	s.live.Store(live)
	s.logQueuedChanges(prev, live)
	s.restartCheckSchedule()
	entries := s.heldAtReload()
	s.log.Info("reload: the configuration was replaced", "users", len(next.Users), "agents", len(next.Agents),
		"templates", len(next.Templates), "rules", len(next.Rules), "notify", len(next.Notifies), "held_runs_keep_holds", len(entries))
	for _, p := range found {
		s.log.Warn("configuration problem", "where", p.Where, "problem", p.What, "severity", p.Severity)
	}
	entries = append(entries, auditEvent("", "switchtender", "reload", fmt.Sprintf("configuration reloaded: %d users, %d agents, %d templates, %d rules, %d notify blocks",
		len(next.Users), len(next.Agents), len(next.Templates), len(next.Rules), len(next.Notifies))))
	s.auditAll(entries)
	return nil
}

// auditAll appends entries to the audit trail in one transaction: all of
// them or, when the store fails (logged), none.
func (s *Server) auditAll(entries []store.AuditEvent) {
	err := s.db.Update(func(tx *store.Tx) error {
		for _, e := range entries {
			if err := tx.Audit(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("writing audit events", "events", len(entries), "err", err)
	}
}

// ReloadRefused is Reload's error for a configuration with errors: the
// configuration in force stays.
type ReloadRefused struct{ Problems []Problem }

func (e *ReloadRefused) Error() string {
	return "the reload was refused and the configuration in force stays: " + strings.Join(e.sentences(), "; ")
}

// sentences are the refused problems' sentences.
func (e *ReloadRefused) sentences() []string {
	out := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		out = append(out, p.What)
	}
	return out
}

// serverChanges names the server block's settings that differ.
func serverChanges(a, b config.Server) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}

// heldAtReload returns, for each run awaiting approval, the audit entry
// saying that it keeps the holds it was decided with.
func (s *Server) heldAtReload() []store.AuditEvent {
	runs, err := s.db.ListRuns()
	if err != nil {
		s.log.Error("reload: listing held runs", "err", err)
		return nil
	}
	var out []store.AuditEvent
	for _, r := range runs {
		if r.Status != StatusAwaitingApproval || r.Proposal == nil {
			continue
		}
		var rules []string
		for _, h := range pendingHolds(r) {
			rules = append(rules, h.Rule)
		}
		out = append(out, auditEvent(r.ID, "switchtender", "reload", fmt.Sprintf("keeps the holds it was decided with (pending: %s); the reloaded rules apply to what plans next", strings.Join(rules, ", "))))
	}
	return out
}
