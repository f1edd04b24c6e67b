package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// A drift check (spec "A drift check works the same way") is a dry run
// that saves its plan with -detailed-exitcode: exit 0, no changes, keeps
// nothing; exit 2 keeps the saved plan sealed (blob "drift", keyed and
// bound to the check's run ID) so that `reconcile CHECK` proposes applying
// exactly that plan. A later check of the same working directory drops the
// plan an earlier one kept, whether or not it finds drift.

// blobDrift is the store's kind for a drift check's kept plan, keyed by the
// check's run ID.
const blobDrift = "drift"

// driftBinding is what a kept plan is sealed to: the check's run ID, told
// apart from a run's own saved plan.
func driftBinding(checkID string) string { return "drift:" + checkID }

// blobDriftRendering is the store's kind for the rendering (`tofu show
// -json`) of a check's kept plan, keyed by the check's run ID: the rules
// decide a reconcile on it (Reconcile). It holds the plan's values as the
// plan does, so it is sealed the same way and dropped with the plan.
const blobDriftRendering = "drift-rendering"

// renderingBinding is what a kept plan's rendering is sealed to: the check
// and the digest of the plan it renders, so it opens for that plan only.
func renderingBinding(checkID, digest string) string {
	return "drift-rendering:" + checkID + ":" + digest
}

// dropRendering clears the plan's rendering from memory.
func (x *execution) dropRendering() {
	clear(x.planJSON)
	x.planJSON = nil
}

// checkSteps are a check's steps after init: plan, show, measure, keep.
func checkSteps() []step {
	return []step{xstep("plan", checkPlanStep), xstep("show", showStep), xstep("measure", checkMeasureStep), xstep("keep", keepStep)}
}

// checkPlanStep plans with -detailed-exitcode into the private directory.
// Exit 2 goes on to read and keep the plan; exit 0 ends the check "no
// drift", dropping what earlier checks kept.
func checkPlanStep(ctx context.Context, x *execution) error {
	x.planPath = filepath.Join(x.private, planFileName)
	err := x.loggedPlan(ctx, exec.CheckArgs(x.planPath))
	var sf *stepFailed
	if errors.As(err, &sf) && sf.Exit == 2 {
		return x.checkPlanConfig(x.planPath)
	}
	if err != nil {
		return err
	}
	if err := x.checkPlanConfig(x.planPath); err != nil {
		return err
	}
	x.s.supersedeChecks(x.run)
	x.s.recordCheck(x.run.ID, &store.Check{CheckedAt: time.Now()})
	return end(StatusSucceeded, 0, "No drift: the state matches the configuration, so this check kept no plan and there is nothing to reconcile.")
}

// checkMeasureStep measures the plan as a gated apply's is measured (and
// adds its sensitive values to the masker), reads its drift apart from its
// changes, and lets the rules decide on it as the reconcile it would be
// (kind reconcile, the check's requester): the floor of the reconcile's
// own decision, which holds for every rule this one held, with the same
// approvers, and is refused for every rule that refused. The rendering
// stays in memory for keepPlan, which seals it beside the plan.
func checkMeasureStep(ctx context.Context, x *execution) error {
	if err := measureStep(ctx, x); err != nil {
		return err
	}
	d, err := gate.AnalyzeDrift(x.planJSON)
	if err != nil {
		x.say("the plan's drift could not be read (%v); it is kept all the same", err)
		d = &gate.Drift{}
	}
	x.drift = d
	req := x.s.gateRequest(x.run)
	req.Kind = string(KindReconcile)
	x.decision = gate.Decide(ctx, req, x.planJSON, x.summary, x.s.currentRules(), x.s.policyTime)
	return ctx.Err()
}

// keepStep seals the plan bound to the check, stores it, wipes the
// plaintext, drops what earlier checks of the directory kept and records
// the finding on the check.
func keepStep(ctx context.Context, x *execution) error {
	defer x.dropRendering()
	plan, err := os.ReadFile(x.planPath)
	if err != nil {
		return fmt.Errorf("reading the saved plan: %w", err)
	}
	defer clear(plan)
	defer wipe(x.s, x.planPath)
	return keepPlan(x, plan)
}

// keepPlan seals a check's plan (in memory: a relay worker's arrives that
// way) bound to the check, stores it, drops what earlier checks of the
// directory kept and records the finding; it returns the check's outcome.
func keepPlan(x *execution, plan []byte) error {
	defer x.dropRendering()
	var err error
	if x.basis, err = planBasis(plan); err != nil {
		return fmt.Errorf("%v; no plan was kept", err)
	}
	x.digest = seal.Digest(plan)
	sealed, err := seal.Seal(x.s.key, driftBinding(x.run.ID), plan)
	if err != nil {
		return fmt.Errorf("sealing the saved plan: %w", err)
	}
	rendering, err := seal.Seal(x.s.key, renderingBinding(x.run.ID, x.digest), x.planJSON)
	if err != nil {
		return fmt.Errorf("sealing the saved plan's rendering: %w", err)
	}
	changes := x.s.sealedOrNone(x.run.ID, x.digest, &x.changes)
	x.s.supersedeChecks(x.run)
	p := x.newProposal(x.decision)
	p.Requested = ""
	c := &store.Check{Drifted: true, Plan: p, Drift: diffsOf(x.drift.Drift, x.masker), Changes: diffsOf(x.drift.Changes, x.masker), Kept: true, CheckedAt: time.Now()}
	counts := planCounts(p)
	err = x.s.db.Update(func(tx *store.Tx) error { // the kept plan, the finding and its entry, together
		if err := tx.PutBlob(blobDriftRendering, x.run.ID, rendering); err != nil {
			return err
		}
		if err := tx.PutBlob(blobDrift, x.run.ID, sealed); err != nil {
			return err
		}
		if err := putChanges(tx, x.run.ID, changes); err != nil {
			return err
		}
		if _, err := tx.UpdateRun(x.run.ID, func(r *store.Run) error { r.Check = c; return nil }); err != nil {
			return err
		}
		return tx.Audit(auditEvent(x.run.ID, "switchtender", "drift", fmt.Sprintf("%d changed outside, %s; plan %s kept", len(x.drift.Drift), counts, p.Digest)))
	})
	if err != nil {
		return fmt.Errorf("storing the sealed plan: %w", err)
	}
	if x.changes != nil {
		x.s.changeCache.put(x.run.ID, x.digest, x.changes)
	}
	x.say("drift: %d changed outside OpenTofu; the configuration would make %s; plan digest %s kept, sealed", len(x.drift.Drift), counts, p.Digest)
	next := fmt.Sprintf("`reconcile %s` proposes applying exactly that plan", x.run.ID)
	if len(p.Refusals) > 0 { // a reconcile from it would be refused: say so, not that one can be proposed
		next = fmt.Sprintf("the rules refuse applying it (%s), so `reconcile %s` is refused", reasons(p.Refusals), x.run.ID)
	}
	return end(StatusSucceeded, 2, "Drift found: %d changed outside OpenTofu, and applying the configuration would make %s. The plan %s is kept, sealed: %s.", len(x.drift.Drift), counts, p.Digest, next)
}

// diffsOf converts the gate's diffs to the store's, each address and
// attribute masked with m (an address holds its instance key, which may be
// a secret the configuration does not mark).
func diffsOf(ds []gate.ResourceDiff, m *mask.Masker) []store.ResourceDiff {
	out := make([]store.ResourceDiff, 0, len(ds))
	for _, d := range ds {
		attrs := make([]string, len(d.Attributes))
		for i, a := range d.Attributes {
			attrs[i] = m.String(a)
		}
		if d.Attributes == nil {
			attrs = nil
		}
		out = append(out, store.ResourceDiff{Address: m.String(d.Address), Action: d.Action, Attributes: attrs})
	}
	return out
}

// recordCheck stores a check's finding on its run.
func (s *Server) recordCheck(id string, c *store.Check) {
	if _, err := s.db.UpdateRun(id, func(r *store.Run) error { r.Check = c; return nil }); err != nil {
		s.log.Error("recording a check's finding", "run", id, "err", err)
	}
}

// supersedeChecks drops the plans that checks older than check r kept for
// its working directory: each blob is deleted and its check records that r
// superseded it. A reconcile in progress is not interleaved (driftMu).
func (s *Server) supersedeChecks(r store.Run) {
	s.driftMu.Lock()
	defer s.driftMu.Unlock()
	runs, err := s.db.ListRuns()
	if err != nil {
		s.log.Error("finding plans earlier checks kept", "run", r.ID, "err", err)
		return
	}
	me, _ := strconv.ParseUint(r.ID, 10, 64)
	dir := s.runDir(r)
	for _, o := range runs {
		n, _ := strconv.ParseUint(o.ID, 10, 64)
		if n >= me || o.Kind != KindCheck || o.Check == nil || !o.Check.Kept || s.runDir(o) != dir {
			continue
		}
		s.dropKept(o.ID, func(c *store.Check) { c.SupersededBy = r.ID },
			auditEvent(o.ID, "switchtender", "superseded", "check "+r.ID+" of the same working directory dropped the plan this check kept"))
	}
}

// dropKept records on check id that its plan is no longer kept (note says
// why), deletes the sealed plan and appends entry to the audit trail, in
// one transaction. The caller holds driftMu.
func (s *Server) dropKept(id string, note func(c *store.Check), entry store.AuditEvent) {
	var run store.Run
	err := s.db.Update(func(tx *store.Tx) error {
		var err error
		run, err = tx.UpdateRun(id, func(r *store.Run) error {
			if r.Check != nil {
				r.Check.Kept = false
				note(r.Check)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, kind := range []string{blobDrift, blobDriftRendering} {
			if err := tx.DeleteBlob(kind, id); err != nil {
				return err
			}
		}
		return tx.Audit(entry)
	})
	if err != nil {
		s.log.Error("dropping a kept plan", "run", id, "err", err)
		return
	}
	s.changed(run)
}
