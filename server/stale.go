package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/store"
)

// A held proposal goes stale when the state its plan was made from no
// longer matches the working directory's state: no approval can make it
// apply (OpenTofu would refuse it too). The server learns the directory's
// state with `tofu state pull` whenever a run in it ends while another
// proposal there is held, and compares when a proposal is displayed or
// approved, so a stale plan is shown as stale before anyone approves it.

// stateBasis is a state's lineage and serial: for a saved plan, those of
// the prior state it was made from (Lineage is empty when there was none).
type stateBasis struct {
	Lineage string `json:"lineage"`
	Serial  int64  `json:"serial"`
}

// parseBasis reads lineage and serial from a state document; empty input
// (no state yet) is the empty basis.
func parseBasis(state []byte) (stateBasis, error) {
	var sb stateBasis
	if len(bytes.TrimSpace(state)) == 0 {
		return sb, nil
	}
	if err := json.Unmarshal(state, &sb); err != nil {
		return stateBasis{}, err
	}
	return sb, nil
}

// planBasis reads the prior state a saved plan was made from: OpenTofu's
// plan file is a zip archive whose "tfstate" entry is that state, so this
// works for every backend, not only local state.
func planBasis(plan []byte) (stateBasis, error) {
	zr, err := zip.NewReader(bytes.NewReader(plan), int64(len(plan)))
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	f, err := zr.Open("tfstate")
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	defer f.Close()
	state, err := io.ReadAll(f)
	defer clear(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	sb, err := parseBasis(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	return sb, nil
}

// currentBasis reads the working directory's current state through the
// tool (`state pull`, so any backend), never logging it: state holds
// sensitive values in clear text.
func (x *execution) currentBasis(ctx context.Context) (stateBasis, error) {
	state, err := x.capture(ctx, "state pull", exec.StatePullArgs())
	defer clear(state)
	if err != nil {
		var sf *stepFailed
		if errors.As(err, &sf) {
			return stateBasis{}, end(StatusFailed, -1, "Refused to apply: reading the current state failed (state pull exited %d), so the plan's basis could not be checked; nothing was applied.", sf.Exit)
		}
		return stateBasis{}, err
	}
	sb, err := parseBasis(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the current state: %w", err)
	}
	return sb, nil
}

// heldIndex remembers which runs hold a saved plan awaiting approval, by
// working directory, so a run that ends need not read every run to find
// them. It is advisory: heldInDir re-reads each candidate from the store.
type heldIndex struct {
	mu    sync.Mutex
	byDir map[string]map[string]bool // working directory -> run IDs
}

// note records r as it was just written: held with a plan, or not.
func (h *heldIndex) note(dir string, r store.Run) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byDir == nil {
		h.byDir = map[string]map[string]bool{}
	}
	held := r.Status == StatusAwaitingApproval && r.Proposal != nil && r.Proposal.Stage == StagePlan && !r.Proposal.Stale
	if held {
		if h.byDir[dir] == nil {
			h.byDir[dir] = map[string]bool{}
		}
		h.byDir[dir][r.ID] = true
	} else if h.byDir[dir] != nil {
		delete(h.byDir[dir], r.ID)
	}
}

func (h *heldIndex) ids(dir string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id := range h.byDir[dir] {
		out = append(out, id)
	}
	return out
}

// heldInDir lists the runs other than except whose saved plan for working
// directory dir awaits approval and is not yet known to be stale.
func (s *Server) heldInDir(dir, except string) ([]store.Run, error) {
	var out []store.Run
	for _, id := range s.held.ids(dir) {
		if id == except {
			continue
		}
		r, err := s.db.GetRun(id)
		if err != nil {
			return nil, err
		}
		if s.runDir(r) == dir && r.Status == StatusAwaitingApproval &&
			r.Proposal != nil && r.Proposal.Stage == StagePlan && !r.Proposal.Stale {
			out = append(out, r)
		}
	}
	return out, nil
}

// runDir is the working directory a run was launched in. A pool's run has
// its working directory on the workers: it is named by pool, project and
// command ("pool eu: infra/infra/network"), never a path here.
func (s *Server) runDir(r store.Run) string {
	if r.Workdir != "" {
		return r.Workdir
	}
	if pool := s.poolOf(r.Template); pool != "" {
		return "pool " + pool + ": " + r.Project + "/" + r.Command
	}
	wd, _ := s.workdir(r)
	return wd
}

// recordWorkdirState runs as every execution ends (unless the server is
// stopping), while the run still holds its working directory and before it
// records its final status: if another proposal there is held, it checks it
// against the local state file, or for another backend reads the
// state (state pull, never logged), records it and marks the held proposals
// whose basis no longer matches stale.
func (s *Server) recordWorkdirState(ctx context.Context, x *execution) {
	if x.binary == "" || x.dir == "" || x.tree != "" || x.checkProcess() != nil {
		return // prepare did not get far enough, the directory is not the run's, or it no longer holds the configuration the run's plan was made from
	}
	held, err := s.heldInDir(x.dir, x.run.ID)
	if err != nil || len(held) == 0 {
		return
	}
	if _, local := localStatePath(x.dir); local {
		// checkStale reads a local state file itself: no tool process.
		s.checkHeld(held)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	inv := x.invocation(exec.StatePullArgs())
	inv.Output = nil // the run's log has ended; the exit code goes to the operator log
	state, res, err := s.runner.Capture(ctx, inv)
	defer clear(state)
	if err != nil || res.ExitCode != 0 {
		s.log.Warn("reading the state to check held proposals", "run", x.run.ID, "dir", x.dir, "exit", res.ExitCode, "err", err)
		return
	}
	basis, err := parseBasis(state)
	if err != nil {
		s.log.Warn("reading the state to check held proposals", "run", x.run.ID, "err", err)
		return
	}
	st := store.WorkdirState{Lineage: basis.Lineage, Serial: basis.Serial, RunID: x.run.ID, At: time.Now()}
	if err := s.db.PutWorkdirState(x.dir, st); err != nil {
		s.log.Error("recording working directory state", "dir", x.dir, "err", err)
	}
	s.checkHeld(held)
}

// checkHeld runs checkStale on each held run, logging what fails.
func (s *Server) checkHeld(held []store.Run) {
	for _, r := range held {
		if err := s.checkStale(r); err != nil {
			s.log.Error("marking a held plan stale", "run", r.ID, "err", err)
		}
	}
}

// checkStale marks r stale when it holds a saved plan whose basis differs
// from the state last read in its working directory after the plan was
// made: for a local backend the state file itself is read (so a change made
// outside Switchtender shows too), for another backend the state last read
// after a run in the directory. It does nothing for any other run.
func (s *Server) checkStale(r store.Run) error {
	p := r.Proposal
	if r.Status != StatusAwaitingApproval || p == nil || p.Stage != StagePlan || p.Stale {
		return nil
	}
	if s.poolOf(r.Template) != "" {
		return nil // the state is the workers'; OpenTofu refuses a stale plan there
	}
	if now, ok := localBasis(s.runDir(r)); ok {
		if now == (stateBasis{p.Lineage, p.Serial}) {
			return nil
		}
		return s.markStale(r, fmt.Sprintf("the state changed after this plan was made (it was planned from serial %d; the state file now has serial %d%s), so it can never apply and nothing was applied. %s",
			p.Serial, now.Serial, lineageNote(p.Lineage, now.Lineage), againHint(r)))
	}
	st, err := s.db.GetWorkdirState(s.runDir(r))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.At.After(p.CreatedAt) || (stateBasis{st.Lineage, st.Serial}) == (stateBasis{p.Lineage, p.Serial}) {
		return nil
	}
	reason := fmt.Sprintf("the state changed after this plan was made (it was planned from serial %d; run %s left serial %d%s), so it can never apply and nothing was applied. %s",
		p.Serial, st.RunID, st.Serial, lineageNote(p.Lineage, st.Lineage), againHint(r))
	return s.markStale(r, reason)
}

// localBasis reads the lineage and serial of dir's state when the local
// backend keeps it (a file read, no tool process); false for another
// backend or a state file that does not read as state. A missing file is
// the empty basis.
func localBasis(dir string) (stateBasis, bool) {
	path, ok := localStatePath(dir)
	if !ok {
		return stateBasis{}, false
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return stateBasis{}, true
	}
	if err != nil {
		return stateBasis{}, false
	}
	defer clear(b)
	sb, err := parseBasis(b)
	return sb, err == nil
}

// markStale ends held run r stale with reason, unless it was released,
// rejected or cancelled meanwhile.
func (s *Server) markStale(r store.Run, reason string) error {
	p := r.Proposal
	_, err := s.transitionAudited(r.ID, StatusStale, func(r *store.Run) error {
		if r.Proposal == nil || r.Proposal.Digest != p.Digest {
			return errorf(ErrConflict, "run %s's proposal changed", r.ID)
		}
		r.Proposal.Stale, r.Proposal.StaleReason = true, reason
		r.Message = "Stale before approval: " + reason
		return nil
	}, func(store.Run) store.AuditEvent { return auditEvent(r.ID, "switchtender", string(StatusStale), reason) })
	if ErrorCode(err) == ErrConflict {
		return nil // approved, rejected or cancelled meanwhile
	}
	if err != nil {
		return err
	}
	s.dropHeld(r.ID)
	return nil
}

// staleAfterInterrupt marks stale the plans held in the working directory
// of r, an apply the server stopped under: it may have changed the state
// there, and no state can be read while the server stops or starts, so the
// plans are not trusted (the gate fails closed). A dry run changes no state.
func (s *Server) staleAfterInterrupt(r store.Run) {
	if k := r.Kind; k == KindPlan || k == KindCheck {
		return
	}
	held, err := s.heldInDir(s.runDir(r), r.ID)
	if err != nil {
		s.log.Error("finding plans held beside an interrupted run", "run", r.ID, "err", err)
		return
	}
	for _, h := range held {
		reason := fmt.Sprintf("run %s was interrupted while it executed in this working directory, so the state this plan was made from may have changed and nothing was applied. %s", r.ID, againHint(h))
		if err := s.markStale(h, reason); err != nil {
			s.log.Error("marking a held plan stale", "run", h.ID, "err", err)
		}
	}
}

func lineageNote(was, now string) string {
	if was == now {
		return ""
	}
	if was == "" {
		return ", a state that did not exist when it planned"
	}
	return ", of another lineage"
}

// newerProposal returns the ID of the newest run, newer than r, whose saved
// plan for r's working directory is held (and not stale) or was applied,
// or "" when there is none (spec: approving an older proposal would apply
// what a newer one superseded).
func (s *Server) newerProposal(r store.Run) string {
	if r.Proposal == nil {
		return ""
	}
	runs, err := s.db.ListRuns()
	if err != nil {
		return ""
	}
	me, _ := strconv.ParseUint(r.ID, 10, 64)
	dir := s.runDir(r)
	for _, o := range runs { // newest first
		n, _ := strconv.ParseUint(o.ID, 10, 64)
		if n <= me || o.Proposal == nil || o.Proposal.Stage != StagePlan || s.runDir(o) != dir {
			continue
		}
		held := o.Status == StatusAwaitingApproval && !o.Proposal.Stale
		applied := o.Status == StatusSucceeded && o.Proposal.Used
		if held || applied {
			return o.ID
		}
	}
	return ""
}
