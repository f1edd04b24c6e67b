package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// The steps of a gated apply's plan (spec "A gated apply carries out the
// approved plan"): plan with -out into the run's private directory, render
// the saved plan with show -json, measure it, seal it and wipe its
// plaintext, and let the rules decide on the proposal.

// planStep plans into the private directory and keeps tofu's own rendering
// (masked, as logged) to show approvers.
func planStep(ctx context.Context, x *execution) error {
	x.planPath = filepath.Join(x.private, planFileName)
	return x.loggedPlan(ctx, exec.PlanArgs(x.planPath))
}

// loggedPlan runs a plan with args and keeps what it printed (masked, as
// logged) in planText, even when it exits 2 (a check's plan with changes).
func (x *execution) loggedPlan(ctx context.Context, args []string) error {
	x.out.Flush()
	if err := x.sink.Flush(); err != nil {
		return fmt.Errorf("storing the log: %w", err)
	}
	from, err := x.s.db.LogSize(x.run.ID)
	if err != nil {
		return fmt.Errorf("reading the log's size: %w", err)
	}
	_, perr := x.tool(ctx, "plan", args)
	if err := x.sink.Flush(); err != nil {
		return fmt.Errorf("storing the log: %w", err)
	}
	x.planText = x.s.logText(x.run.ID, from)
	return perr
}

// showStep renders the saved plan as JSON for the gate: the gate reads the
// saved plan, never the text the tool printed. The JSON is never logged.
func showStep(ctx context.Context, x *execution) error {
	out, err := x.capture(ctx, "show -json", exec.ShowJSONArgs(x.planPath))
	x.planJSON = out
	return err
}

// measureStep measures the plan and computes its change set (masked, once
// its sensitive values joined the masker). A plan the gate cannot read
// leaves the summary nil, and decide then holds it (the gate fails closed);
// a plan planview cannot read has no change set.
func measureStep(ctx context.Context, x *execution) error {
	x.summary, _ = gate.AnalyzePlan(x.planJSON)
	// What the rules say about the plan (a policy's messages, its errors)
	// may quote the plan's values: the ones it marks sensitive join the
	// masker before any reason is stored or shown.
	if sens, err := gate.SensitiveValues(x.planJSON); err == nil {
		x.masker.Add(sens...)
	}
	x.measureChanges()
	return nil
}

// sealStep digests the saved plan, reads the state it was made from, seals
// it into the store bound to the run, and wipes its plaintext.
func sealStep(ctx context.Context, x *execution) error {
	plan, err := os.ReadFile(x.planPath)
	if err != nil {
		return fmt.Errorf("reading the saved plan: %w", err)
	}
	defer clear(plan)
	if err := x.sealPlan(plan); err != nil {
		return err
	}
	wipe(x.s, x.planPath)
	return nil
}

// sealPlan reads the state the saved plan (in memory) was made from,
// digests it and stores it sealed with the server key, bound to the run.
func (x *execution) sealPlan(plan []byte) error {
	var err error
	if x.basis, err = planBasis(plan); err != nil {
		return fmt.Errorf("%v; nothing was applied", err)
	}
	x.digest = seal.Digest(plan)
	sealed, err := seal.Seal(x.s.key, x.run.ID, plan)
	if err != nil {
		return fmt.Errorf("sealing the saved plan: %w", err)
	}
	if err := x.s.db.PutBlob(blobPlan, x.run.ID, sealed); err != nil {
		return fmt.Errorf("storing the sealed plan: %w", err)
	}
	return nil
}

// decideStep lets the rules decide on the proposal: refuse ends the run,
// hold waits for approvers, pass goes on to apply the saved plan.
func decideStep(ctx context.Context, x *execution) error {
	r := x.run
	dec := gate.Decide(ctx, x.s.gateRequest(r), x.planJSON, x.summary, x.s.currentRules(), x.s.policyTime)
	clear(x.planJSON)
	x.planJSON = nil
	if ctx.Err() != nil {
		// A policy that failed on the cancelled context must not hold the run.
		return ctx.Err()
	}
	p := x.newProposal(dec)
	x.say("proposal: %s; plan digest %s", planCounts(p), p.Digest)
	switch dec.Outcome {
	case gate.Refuse:
		x.s.setProposal(r.ID, p, x.changes)
		return end(StatusRefused, -1, "The rules refuse this apply: %s. Nothing was applied.", reasons(p.Refusals))
	case gate.Hold:
		x.s.setProposal(r.ID, p, x.changes)
		return end(StatusAwaitingApproval, -1, "Held for approval: %s. An approver releases exactly this plan with: approve %s --digest %s", reasons(p.Holds), r.ID, p.Digest)
	}
	x.say("no rule holds this proposal; applying the saved plan")
	run, err := x.s.storeProposal(r.ID, p, x.changes, func(r *store.Run) {
		r.Phase = phaseApply
		r.Approvals = append(r.Approvals, store.Approval{By: "rules", Digest: p.Digest, Stage: StagePlan, Decision: DecisionPass, At: time.Now()})
	})
	if err != nil {
		return fmt.Errorf("recording the rules' decision: %w", err)
	}
	x.run = run
	return nil
}

// newProposal is the proposal the plan makes, with the rules' decision.
func (x *execution) newProposal(dec gate.Decision) *store.Proposal {
	p := &store.Proposal{
		Digest:    x.digest,
		PlanText:  x.planText,
		Requested: requestedHow(x.run),
		Lineage:   x.basis.Lineage,
		Serial:    x.basis.Serial,
		Stage:     StagePlan,
		CreatedAt: time.Now(),
	}
	switch id, err := scan.DirIdentity(x.procDir()); {
	case x.startFiles != nil: // planned on a relay worker, which read its directory
		p.StartFiles = x.startFiles
	case err == nil:
		p.StartFiles = id.StartFileSums() // unread, none are recorded: the apply finds none or starts nothing
	}
	if sum := x.summary; sum != nil {
		p.Add, p.Change, p.Destroy, p.Replace, p.Forget = sum.Add, sum.Change, sum.Destroy, sum.Replace, sum.Forget
		p.Addresses = maskedAddresses(sum.ByAction, x.masker)
	}
	for _, h := range dec.Holds {
		p.Holds = append(p.Holds, store.Hold{Rule: h.Rule, Reason: x.masker.String(h.Reason), Approvers: h.Approvers, MinApprovals: h.MinApprovals})
	}
	for _, h := range dec.Refusals {
		p.Refusals = append(p.Refusals, store.Hold{Rule: h.Rule, Reason: x.masker.String(h.Reason)})
	}
	return p
}

// maskedAddresses is byAction (the gate's addresses by action) with every
// address masked with m: an address holds its instance key, and a for_each
// key may be a secret the configuration does not mark (a secret answer for
// a variable it declares plain).
func maskedAddresses(byAction map[string][]string, m *mask.Masker) map[string][]string {
	if byAction == nil {
		return nil
	}
	out := make(map[string][]string, len(byAction))
	for action, addrs := range byAction {
		masked := make([]string, len(addrs))
		for i, a := range addrs {
			masked[i] = m.String(a)
		}
		out[action] = masked
	}
	return out
}
