package sshd

import (
	"context"
	"slices"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/tui"
)

// check is drift check r's finding as the console shows it: the drift and
// the changes per address and attribute (never values), the kept plan's
// digest, counts and holds, and whether a reconcile can be proposed now
// (Server.reconcilable, the test Reconcile makes) with the server's
// sentence on it (api.ReconcileNote, as `show` prints it).
func (c *Console) check(r store.Run) *tui.CheckResult {
	out := &tui.CheckResult{Reconcilable: c.s.Reconcilable(r) == nil, Reconcile: api.ReconcileNote(r)}
	k := r.Check
	if k == nil {
		return out
	}
	out.Finished, out.Drifted, out.CheckedAt = true, k.Drifted, k.CheckedAt
	out.Drift, out.Changes = tuiDiffs(k.Drift), tuiDiffs(k.Changes)
	out.SupersededBy, out.ReconciledBy = k.SupersededBy, k.ReconciledBy
	if p := k.Plan; p != nil {
		out.Digest, out.PlanText = p.Digest, p.PlanText
		out.Add, out.Change, out.Destroy, out.Replace, out.Forget = p.Add, p.Change, p.Destroy, p.Replace, p.Forget
		for _, h := range p.Holds {
			out.Holds = append(out.Holds, tui.Hold{Rule: h.Rule, Reason: h.Reason, Approvers: slices.Clone(h.Approvers)})
		}
	}
	return out
}

// tuiDiffs converts the store's resource diffs to the console's.
func tuiDiffs(ds []store.ResourceDiff) []tui.ResourceDiff {
	out := make([]tui.ResourceDiff, 0, len(ds))
	for _, d := range ds {
		out = append(out, tui.ResourceDiff{Address: d.Address, Action: d.Action, Attributes: slices.Clone(d.Attributes)})
	}
	return out
}

// Reconcile proposes, as the session's identity, applying exactly the plan
// check checkID kept (Server.Reconcile, as the SSH reconcile command) and
// returns the held reconcile's ID; a refusal is the server's sentence.
func (c *Console) Reconcile(ctx context.Context, checkID string) (string, error) {
	run, err := c.s.Reconcile(ctx, c.id, checkID)
	if err != nil {
		return "", c.userErr("reconcile", api.Coded(checkID, err))
	}
	return run.ID, nil
}
