// Package metrics holds the control node's Prometheus metrics
// (docs/monitoring.md, "Metrics and health checks"): counters and histograms
// the server adds to, and gauges read from the server when scraped.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/switchtender/switchtender/store"
)

// Set is a server's metrics, in a registry of its own so that two servers
// in one process do not collide.
type Set struct {
	Reg          *prometheus.Registry
	RunsTotal    *prometheus.CounterVec   // runs ended, by template, kind and final status
	RunDuration  *prometheus.HistogramVec // created to ended, by template, kind and final status
	StepDuration *prometheus.HistogramVec // one tool step, by step
	SSHOpen      prometheus.Gauge         // SSH sessions open
	SSHRefused   *prometheus.CounterVec   // connections refused, by reason
	MaskerBytes  prometheus.Counter       // tool output bytes through the masker into logs
	NotifySent   *prometheus.CounterVec   // notifications delivered, by notify block
	NotifyFailed *prometheus.CounterVec   // delivery attempts that failed, by notify block
	NotifyQueue  prometheus.Gauge         // deliveries waiting in the store
	// ForgeDeliveries counts webhook deliveries by forge block and outcome.
	ForgeDeliveries *prometheus.CounterVec
}

// runBuckets span a few seconds to a few hours: runs include tofu init.
var runBuckets = []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200}

// New registers a server's metrics; live reads the gauges that are
// computed when scraped (queue depth, executing runs, held proposals).
func New(live func() Live) *Set {
	m := &Set{
		Reg: prometheus.NewRegistry(),
		RunsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_runs_total",
			Help: "Runs that ended, by template, kind and final status."}, []string{"template", "kind", "status"}),
		RunDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchtender_run_duration_seconds",
			Help: "Time from a run's creation to its final status (held time included).", Buckets: runBuckets},
			[]string{"template", "kind", "status"}),
		StepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchtender_step_duration_seconds",
			Help: "Time one step of a run took (init, plan, show, apply, ...).", Buckets: runBuckets}, []string{"step"}),
		SSHOpen: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchtender_ssh_sessions_open",
			Help: "SSH sessions open now (commands and consoles)."}),
		SSHRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_ssh_refused_total",
			Help: "SSH connections or sessions refused: unknown_key (no configured user or agent has the key), connection_limit (a cap at accept) or session_limit (a session channel past ssh_max_sessions_per_connection)."}, []string{"reason"}),
		MaskerBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchtender_masker_bytes_total",
			Help: "Bytes of tool output that passed through the masker into run logs."}),
		NotifySent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_notify_deliveries_total",
			Help: "Notifications delivered (a 2xx answer), by notify block."}, []string{"notify"}),
		NotifyFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_notify_failures_total",
			Help: "Notification delivery attempts that failed (to be retried, or given up), by notify block."}, []string{"notify"}),
		NotifyQueue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchtender_notify_queue",
			Help: "Notification deliveries waiting in the store."}),
		ForgeDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_forge_deliveries_total",
			Help: "Forge webhook deliveries, by forge block and outcome: stored, duplicate, unsigned (401), malformed (400), too_large (413), ignored, unknown_repository, unknown_forge, store_error, polled (made by a poll)."}, []string{"forge", "outcome"}),
	}
	m.Reg.MustRegister(m.RunsTotal, m.RunDuration, m.StepDuration, m.SSHOpen, m.SSHRefused, m.MaskerBytes,
		m.NotifySent, m.NotifyFailed, m.NotifyQueue, m.ForgeDeliveries, liveCollector{live},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.SSHRefused.WithLabelValues("unknown_key")
	m.SSHRefused.WithLabelValues("connection_limit")
	m.SSHRefused.WithLabelValues("session_limit")
	return m
}

// Live are the gauges read when scraped.
type Live struct {
	Queued, Running, Held int       // runs in each status
	QueueDepth, Executing int       // the scheduler's queue and its running jobs
	OldestHeld            time.Time // when the longest-held run started waiting; zero if none
}

var (
	descRuns = prometheus.NewDesc("switchtender_runs", "Runs not ended, by status (queued, running, awaiting_approval).",
		[]string{"status"}, nil)
	descQueue = prometheus.NewDesc("switchtender_queue_depth",
		"Jobs waiting for a slot or their working directory.", nil, nil)
	descExecuting = prometheus.NewDesc("switchtender_runs_executing",
		"Runs whose steps are executing now.", nil, nil)
	descHeld = prometheus.NewDesc("switchtender_proposals_held",
		"Runs awaiting approval.", nil, nil)
	descOldest = prometheus.NewDesc("switchtender_proposal_oldest_held_seconds",
		"How long the run awaiting approval longest has waited; 0 when none waits.", nil, nil)
)

// liveCollector reports Live at each scrape.
type liveCollector struct{ read func() Live }

func (liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRuns, descQueue, descExecuting, descHeld, descOldest} {
		ch <- d
	}
}

func (c liveCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.read()
	for st, v := range map[store.Status]int{store.StatusQueued: n.Queued, store.StatusRunning: n.Running, store.StatusAwaitingApproval: n.Held} {
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, float64(v), string(st))
	}
	ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(n.QueueDepth))
	ch <- prometheus.MustNewConstMetric(descExecuting, prometheus.GaugeValue, float64(n.Executing))
	ch <- prometheus.MustNewConstMetric(descHeld, prometheus.GaugeValue, float64(n.Held))
	age := 0.0
	if !n.OldestHeld.IsZero() {
		age = time.Since(n.OldestHeld).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age)
}

// CountingWriter adds the bytes written through it to W to C.
type CountingWriter struct {
	W interface{ Write([]byte) (int, error) }
	C prometheus.Counter
}

// Write writes p to W and adds what it wrote to C.
func (cw CountingWriter) Write(p []byte) (int, error) {
	n, err := cw.W.Write(p)
	cw.C.Add(float64(n))
	return n, err
}
