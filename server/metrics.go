package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus metrics (README "Metrics"), in a
// registry of its own so that two servers in one process do not collide.
type metrics struct {
	reg          *prometheus.Registry
	runsTotal    *prometheus.CounterVec   // runs ended, by template, kind and final status
	runDuration  *prometheus.HistogramVec // created to ended, by template, kind and final status
	stepDuration *prometheus.HistogramVec // one tool step, by step
	sshOpen      prometheus.Gauge         // SSH sessions open
	sshRefused   *prometheus.CounterVec   // connections refused, by reason
	maskerBytes  prometheus.Counter       // tool output bytes through the masker into logs
	notifySent   *prometheus.CounterVec   // notifications delivered, by notify block
	notifyFailed *prometheus.CounterVec   // delivery attempts that failed, by notify block
	notifyQueue  prometheus.Gauge         // deliveries waiting in the store
}

// runBuckets span a few seconds to a few hours: runs include tofu init.
var runBuckets = []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200}

// newMetrics registers the server's metrics; live reads the gauges that are
// computed when scraped (queue depth, executing runs, held proposals).
func newMetrics(live func() liveCounts) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		runsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_runs_total",
			Help: "Runs that ended, by template, kind and final status."}, []string{"template", "kind", "status"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchtender_run_duration_seconds",
			Help: "Time from a run's creation to its final status (held time included).", Buckets: runBuckets},
			[]string{"template", "kind", "status"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchtender_step_duration_seconds",
			Help: "Time one step of a run took (init, plan, show, apply, ...).", Buckets: runBuckets}, []string{"step"}),
		sshOpen: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchtender_ssh_sessions_open",
			Help: "SSH sessions open now (commands and consoles)."}),
		sshRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_ssh_refused_total",
			Help: "SSH connections or sessions refused: unknown_key (no configured user or agent has the key), connection_limit (a cap at accept) or session_limit (a session channel past ssh_max_sessions_per_connection)."}, []string{"reason"}),
		maskerBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchtender_masker_bytes_total",
			Help: "Bytes of tool output that passed through the masker into run logs."}),
		notifySent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_notify_deliveries_total",
			Help: "Notifications delivered (a 2xx answer), by notify block."}, []string{"notify"}),
		notifyFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchtender_notify_failures_total",
			Help: "Notification delivery attempts that failed (to be retried, or given up), by notify block."}, []string{"notify"}),
		notifyQueue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchtender_notify_queue",
			Help: "Notification deliveries waiting in the store."}),
	}
	m.reg.MustRegister(m.runsTotal, m.runDuration, m.stepDuration, m.sshOpen, m.sshRefused, m.maskerBytes,
		m.notifySent, m.notifyFailed, m.notifyQueue, liveCollector{live},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.sshRefused.WithLabelValues("unknown_key")
	m.sshRefused.WithLabelValues("connection_limit")
	m.sshRefused.WithLabelValues("session_limit")
	return m
}

// liveCounts are the gauges read when scraped.
type liveCounts struct {
	queued, running, held int       // runs in each status
	queueDepth, executing int       // the scheduler's queue and its running jobs
	oldestHeld            time.Time // when the longest-held run started waiting; zero if none
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

// liveCollector reports liveCounts at each scrape.
type liveCollector struct{ read func() liveCounts }

func (liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRuns, descQueue, descExecuting, descHeld, descOldest} {
		ch <- d
	}
}

func (c liveCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.read()
	for st, v := range map[Status]int{StatusQueued: n.queued, StatusRunning: n.running, StatusAwaitingApproval: n.held} {
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, float64(v), string(st))
	}
	ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(n.queueDepth))
	ch <- prometheus.MustNewConstMetric(descExecuting, prometheus.GaugeValue, float64(n.executing))
	ch <- prometheus.MustNewConstMetric(descHeld, prometheus.GaugeValue, float64(n.held))
	age := 0.0
	if !n.oldestHeld.IsZero() {
		age = time.Since(n.oldestHeld).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age)
}

// liveCounts reads the tracker and the scheduler for a scrape.
func (s *Server) liveCounts() liveCounts {
	n, oldest := s.runs.Counts()
	depth, executing := s.sched.Depth()
	return liveCounts{queued: n[StatusQueued], running: n[StatusRunning], held: n[StatusAwaitingApproval],
		queueDepth: depth, executing: executing, oldestHeld: oldest}
}

// countingWriter counts the bytes written through it into a counter.
type countingWriter struct {
	w interface{ Write([]byte) (int, error) }
	c prometheus.Counter
}

func (cw countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.c.Add(float64(n))
	return n, err
}
