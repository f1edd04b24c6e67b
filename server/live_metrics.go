package server

import (
	"github.com/switchtender/switchtender/server/metrics"
)

// liveCounts reads the tracker and the scheduler for a scrape.
func (s *Server) liveCounts() metrics.Live {
	n, oldest := s.runs.Counts()
	depth, executing := s.sched.Depth()
	return metrics.Live{Queued: n[StatusQueued], Running: n[StatusRunning], Held: n[StatusAwaitingApproval],
		QueueDepth: depth, Executing: executing, OldestHeld: oldest}
}
