package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/switchtender/switchtender/server/metrics"
)

// serverMetrics are the server's metrics ([metrics.Set]); sshOpen and
// sshRefused are its SSH gauges under the names the front door's files use.
type serverMetrics struct {
	*metrics.Set
	sshOpen    prometheus.Gauge
	sshRefused *prometheus.CounterVec
}

func newServerMetrics(live func() metrics.Live) *serverMetrics {
	m := metrics.New(live)
	return &serverMetrics{Set: m, sshOpen: m.SSHOpen, sshRefused: m.SSHRefused}
}

// liveCounts reads the tracker and the scheduler for a scrape.
func (s *Server) liveCounts() metrics.Live {
	n, oldest := s.runs.Counts()
	depth, executing := s.sched.Depth()
	return metrics.Live{Queued: n[StatusQueued], Running: n[StatusRunning], Held: n[StatusAwaitingApproval],
		QueueDepth: depth, Executing: executing, OldestHeld: oldest}
}
