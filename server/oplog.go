package server

import (
	"context"
	"log/slog"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/notify"
	"github.com/switchtender/switchtender/server/oplog"
	"github.com/switchtender/switchtender/store"
)

// The operator log (docs/monitoring.md, "The operator log"): one record per run transition,
// approval, rejection, refusal, recovery action and reload, through the
// *slog.Logger in Options. Records carry names, statuses, digests and
// sentences the store already keeps, never a value; what a person typed is
// passed through scrub first. Which writes are transitions is
// server/oplog's Tracker's to tell.

// noteRun writes the operator log's record of a status change of r (and
// counts it in the metrics); changed calls it after every write of a run.
func (s *Server) noteRun(r store.Run) {
	tn, ok := s.runs.Note(r)
	if !ok {
		return
	}
	level := slog.LevelInfo
	if tn.To == StatusFailed || tn.To == StatusInterrupted {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("run", r.ID), slog.String("template", r.Template), slog.String("kind", string(r.Kind)),
		slog.String("requester", r.Requester), slog.String("requester_kind", string(r.RequesterKind)),
		slog.String("from", string(tn.From)), slog.String("status", string(tn.To)),
		slog.Float64("duration_seconds", tn.At.Sub(r.CreatedAt).Seconds()),
	}
	if tn.To.Final() || tn.To == StatusAwaitingApproval {
		attrs = append(attrs, slog.String("message", s.scrub(r.Message)))
	}
	s.log.LogAttrs(context.Background(), level, "run "+string(tn.To), attrs...)
	s.notifyRun(r, tn)
	if tn.To.Final() {
		s.metrics.RunsTotal.WithLabelValues(r.Template, string(r.Kind), string(tn.To)).Inc()
		s.metrics.RunDuration.WithLabelValues(r.Template, string(r.Kind), string(tn.To)).Observe(tn.At.Sub(r.CreatedAt).Seconds())
	}
}

// notifyRun posts the deliveries a status change of r makes, if any.
func (s *Server) notifyRun(r store.Run, tn oplog.Transition) {
	event := notify.EventOf(r, tn.From, tn.To)
	if event == "" || s.notifier == nil {
		return
	}
	var changes func() string
	if event == config.EventAwaitingApproval {
		changes = func() string { return s.changesSummary(r) }
	}
	ds, err := notify.Deliveries(r, event, s.config().Notifies, changes)
	if err != nil {
		s.log.Error("encoding a notification", "run", r.ID, "err", err)
		return
	}
	s.notifier.Post(ds...)
}

// scrub masks, in a sentence bound for the operator log, every static
// credential value and notify URL and secret the configuration holds (a
// sentence the store keeps holds no secret already; this guards what a
// person typed).
func (s *Server) scrub(text string) string { return s.live.Load().scrubber.String(text) }
