package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// blobPlan is the store's kind for a sealed saved plan, keyed by run ID.
const blobPlan = "plan"

// setProposal stores p as run id's proposal with the change set cs of its
// plan beside it (storeProposal); a failure is logged.
func (s *Server) setProposal(id string, p *store.Proposal, cs *planview.ChangeSet) {
	if _, err := s.storeProposal(id, p, cs, nil); err != nil {
		s.log.Error("storing proposal", "run", id, "err", err)
	}
}

// storeProposal stores, in one write, p as run id's proposal (also, when
// not nil, changes the run further in the same write) and the change set
// cs of its plan sealed beside it; a nil cs drops any change set stored
// for an earlier proposal. A change set that cannot be sealed is logged
// and left out: the proposal stands without one. It returns the run as
// written.
func (s *Server) storeProposal(id string, p *store.Proposal, cs *planview.ChangeSet, also func(r *store.Run)) (store.Run, error) {
	sealed := s.sealedOrNone(id, p.Digest, &cs)
	var run store.Run
	err := s.db.Update(func(tx *store.Tx) error {
		if err := putChanges(tx, id, sealed); err != nil {
			return err
		}
		var err error
		run, err = tx.UpdateRun(id, func(r *store.Run) error {
			r.Proposal = p
			if also != nil {
				also(r)
			}
			return nil
		})
		return err
	})
	if err == nil && cs != nil {
		s.changeCache.put(id, p.Digest, cs)
	}
	return run, err
}

// dropHeld drops what a held run keeps on disk once it no longer waits:
// the scan's private copy of its configuration and a pull request's tree
// in its private directory. Its sealed saved plan needs no call: the store
// deletes it in the write that ends the run, on every path and node
// (store.DB.DropBlobsAtEnd, set in New), and dropEndedPlans sweeps what an
// earlier version left.
func (s *Server) dropHeld(id string) {
	for _, name := range []string{scanCopyName, treeName} {
		if err := os.RemoveAll(filepath.Join(s.runsDir, id, name)); err != nil {
			s.log.Error("removing a run's private tree", "run", id, "dir", name, "err", err)
		}
	}
}

// dropEndedPlans deletes the sealed plans of runs that ended (or are gone)
// left in the store by a version that did not drop them with the run's
// end, as a relay pool's applies did; it returns how many it dropped.
func (s *Server) dropEndedPlans() (int, error) {
	keys, err := s.db.ListBlobs(blobPlan)
	if err != nil {
		return 0, fmt.Errorf("listing sealed plans: %w", err)
	}
	n := 0
	for _, id := range keys {
		r, err := s.db.GetRun(id)
		if err == nil && !r.Status.Final() {
			continue
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return n, fmt.Errorf("reading run %s of a sealed plan: %w", id, err)
		}
		if err := s.db.DeleteBlob(blobPlan, id); err != nil {
			return n, fmt.Errorf("dropping the sealed plan of ended run %s: %w", id, err)
		}
		n++
	}
	return n, nil
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
