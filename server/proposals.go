package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchtender/switchtender/store"
)

// blobPlan is the store's kind for a sealed saved plan, keyed by run ID.
const blobPlan = "plan"

func (s *Server) setProposal(id string, p *store.Proposal) {
	if _, err := s.db.UpdateRun(id, func(r *store.Run) error { r.Proposal = p; return nil }); err != nil {
		s.log.Error("storing proposal", "run", id, "err", err)
	}
}

// dropHeld drops what a held run keeps once it no longer waits: its
// sealed saved plan, and the scan's private copy of its configuration and a
// pull request's tree in its private directory.
func (s *Server) dropHeld(id string) {
	if err := s.db.DeleteBlob(blobPlan, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("dropping sealed plan", "run", id, "err", err)
	}
	for _, name := range []string{scanCopyName, treeName} {
		if err := os.RemoveAll(filepath.Join(s.runsDir, id, name)); err != nil {
			s.log.Error("removing a run's private tree", "run", id, "dir", name, "err", err)
		}
	}
}

// logText reads a run's stored (masked) log from an offset as text.
func (s *Server) logText(id string, from int64) string {
	chunks, err := s.db.ReadLog(id, from)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range chunks {
		b.Write(c.Data)
	}
	return b.String()
}
