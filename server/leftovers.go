package server

import (
	"time"

	"github.com/switchtender/switchtender/server/runstep"
)

// runMarker is the run marker of run id on the control node.
func (s *Server) runMarker(id string) string {
	return runstep.Marker(s.config().Server.DataDir, id)
}

// stopLeftovers stops the processes a previous server left running for the
// given runs: the parent-death signal interrupts the tool itself when the
// server dies, but what the tool started (a provisioner's command) can
// outlive it. They get SIGINT, then SIGKILL after grace. It reads /proc, so
// it does nothing where there is none. It returns how many it found.
func (s *Server) stopLeftovers(ids []string, grace time.Duration) int {
	markers := make([]string, 0, len(ids))
	for _, id := range ids {
		markers = append(markers, s.runMarker(id))
	}
	return stopMarked(markers, grace)
}
