package sshd

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"

	"github.com/switchtender/switchtender/store"
)

// printRun prints r for the caller: as JSON when asked (always the whole
// run, as show --json gives it), else as text; with detail (show) its
// variables, approvals, proposal and plan text too. It returns the exit
// status.
func (c *call) printRun(r store.Run, detail bool) int {
	v := c.s.View(r, c.id, detail || c.json)
	if c.json {
		return writeJSON(c.out, v)
	}
	writeRunHead(c.out, v)
	if !detail {
		writeHolds(c.out, v)
		return exitOK
	}
	writeRunDetail(c.out, v)
	writeApprovals(c.out, v.Approvals)
	if v.Check != nil {
		writeCheck(c.out, v)
	}
	if v.Scan != nil {
		writeScan(c.out, v.Scan)
	}
	if v.Run.DryPlan != nil {
		writeDryPlan(c.out, v)
	}
	if v.Proposal != nil {
		writeProposal(c.out, v)
	}
	return exitOK
}

// writeDryPlan writes what a dry run's plan would do, as measured: its
// digest, the destroy count the rules measure, tofu's counts and the
// command that shows its change set. The plan file itself is never kept.
func writeDryPlan(w io.Writer, v api.RunView) {
	p := v.Run.DryPlan
	fmt.Fprintln(w, "dry run's plan (the plan file is not kept)")
	fmt.Fprintf(w, "  digest   %s\n", screentext.Field(p.Digest))
	fmt.Fprintf(w, "  DESTROYS %d (every delete, replacements included)\n", p.Destroy)
	fmt.Fprintf(w, "  plan:    %s\n", v.Counts)
	writeChangesHint(w, v)
}

// writeRunHead writes what every printed run starts with: status, template,
// who asked, the run it repeats, its message, and whether it is stale.
func writeRunHead(w io.Writer, v api.RunView) {
	fmt.Fprintf(w, "run %s: %s\n", v.ID, v.Status)
	fmt.Fprintf(w, "  template %s (%s in %s, %s), %s by %s\n", screentext.Field(v.Template), screentext.Field(v.Command),
		screentext.Field(v.Project), v.Tool, v.Kind, screentext.Sentence(api.RequestedHow(v.Run)))
	if v.RerunOf != "" {
		fmt.Fprintf(w, "  a rerun of run %s\n", v.RerunOf)
	}
	if v.Stale {
		fmt.Fprintf(w, "  STALE: %s\n", screentext.Sentence(v.StaleReason))
	} else if v.Message != "" {
		fmt.Fprintf(w, "  %s\n", screentext.Sentence(v.Message))
	}
	if v.WaitsBehind != "" {
		fmt.Fprintf(w, "  %s\n", screentext.Sentence(v.WaitsBehind))
	}
	if v.NewerProposal != "" {
		fmt.Fprintf(w, "  a newer proposal exists: run %s\n", v.NewerProposal)
	}
	if v.ReconcileOf != "" {
		fmt.Fprintf(w, "  a reconcile of drift check %s\n", v.ReconcileOf)
	}
	if v.Reconcile != "" {
		fmt.Fprintf(w, "  reconcile: %s\n", screentext.Sentence(v.Reconcile))
	}
	writeCommit(w, v.Commit)
	for _, l := range api.PullRequestLines(v.PullRequest) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	writeWorkers(w, v)
}

// writeWorkers names the relay workers that took the run's phases. A plan
// phase that ended before its plan (held or refused on the scan, failed in
// init) names the worker that took it, not a worker that planned.
func writeWorkers(w io.Writer, v api.RunView) {
	if store.Status(v.Run.Status) == store.StatusRunning && writeRunningWorkers(w, v) {
		return
	}
	planned := slices.ContainsFunc(v.Steps, func(s store.Step) bool { return s.Name == "plan" || s.Name == "apply" })
	switch {
	case v.PlannedBy != "" && !planned:
		fmt.Fprintf(w, "  taken by relay worker %s, which did not get as far as a plan\n", v.PlannedBy)
	case v.PlannedBy != "" && v.PlannedBy == v.AppliedBy:
		fmt.Fprintf(w, "  planned and applied on relay worker %s\n", v.PlannedBy)
	default:
		if v.PlannedBy != "" {
			fmt.Fprintf(w, "  planned on relay worker %s\n", v.PlannedBy)
		}
		if v.AppliedBy != "" {
			fmt.Fprintf(w, "  applied on relay worker %s\n", v.AppliedBy)
		}
	}
}

// writeRunningWorkers names the workers of a running run and reports
// whether it wrote anything: false when no worker has taken it.
func writeRunningWorkers(w io.Writer, v api.RunView) bool {
	switch {
	case store.Phase(v.Phase) == store.PhaseApply && v.AppliedBy == "" && v.PlannedBy != "":
		fmt.Fprintf(w, "  planned on relay worker %s; its apply waits for a worker of the pool\n", v.PlannedBy)
	case v.AppliedBy != "" || v.PlannedBy != "":
		fmt.Fprintf(w, "  running on relay worker %s\n", cmp.Or(v.AppliedBy, v.PlannedBy))
		if v.AppliedBy != "" && v.PlannedBy != "" && v.AppliedBy != v.PlannedBy {
			fmt.Fprintf(w, "  planned on relay worker %s\n", v.PlannedBy)
		}
	default:
		return false
	}
	return true
}

// writeCommit says which commit a run ran, when its checkout is a git
// repository; the branch and commit names are escaped as units.
func writeCommit(w io.Writer, c *store.Commit) {
	if c != nil {
		cc := *c
		cc.Ref, cc.SHA = screentext.Field(c.Ref), screentext.Field(c.SHA)
		c = &cc
	}
	switch {
	case c == nil:
	case c.Ref != "" && c.SHA == "":
		fmt.Fprintf(w, "  a pull request's plan of %s, at the commit the pool's worker resolves it to\n", c.Ref)
	case c.Ref != "":
		fmt.Fprintf(w, "  a pull request's plan of %s at commit %s\n", c.Ref, c.SHA)
	case c.Dirty:
		fmt.Fprintf(w, "  commit %s, with changes not committed\n", c.SHA)
	default:
		fmt.Fprintf(w, "  commit %s\n", c.SHA)
	}
}

// writeScan writes what the configuration scan read and every finding.
func writeScan(w io.Writer, sc *store.Scan) {
	fmt.Fprintf(w, "configuration scan (%s): %d %s, %d %s, modules digest %s\n", sc.Why,
		sc.Modules, api.Plural(sc.Modules, "module", "modules"), sc.Files, api.Plural(sc.Files, "file", "files"), sc.Digest)
	if len(sc.Findings) == 0 {
		fmt.Fprintln(w, "  no finding")
	}
	for _, f := range sc.Findings {
		fmt.Fprintf(w, "  finding %s\n", api.FindingText(f))
	}
}

// writeRunDetail writes a run's variables (secret ones by name only) and
// its times.
func writeRunDetail(w io.Writer, v api.RunView) {
	names := make([]string, 0, len(v.Vars))
	for k := range v.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "  var %s = %s\n", screentext.Field(k), screentext.Field(v.Vars[k]))
	}
	for _, k := range v.SecretVars {
		fmt.Fprintf(w, "  var %s = (sensitive)\n", k)
	}
	fmt.Fprintf(w, "  created %s", v.CreatedAt.Format(time.RFC3339))
	if !v.FinishedAt.IsZero() {
		fmt.Fprintf(w, ", finished %s", v.FinishedAt.Format(time.RFC3339))
	}
	if st := store.Status(v.Run.Status); v.ExitCode >= 0 && (st == store.StatusSucceeded || st == store.StatusFailed) {
		fmt.Fprintf(w, ", exit code %d", v.ExitCode)
	}
	fmt.Fprintln(w)
}

// writeApprovals writes the decisions on a run's proposals, in order: "approved"
// only where a person approved.
func writeApprovals(w io.Writer, approvals []store.Approval) {
	for _, a := range approvals {
		at := a.At.Format(time.RFC3339)
		switch store.Decision(a.Decision) {
		case store.DecisionApprove:
			fmt.Fprintf(w, "  approved (%s stage) by %s at %s, releasing %s: %s\n", a.Stage, a.By, at, api.RulesPhrase(a.Rules), a.Digest)
		case store.DecisionReject:
			fmt.Fprintf(w, "  rejected (%s stage) by %s at %s: %s\n", a.Stage, screentext.Field(a.By), at, screentext.Field(a.Reason))
		case store.DecisionPass:
			if store.Stage(a.Stage) == store.StageScan {
				fmt.Fprintf(w, "  the configuration scan found nothing, so exclude_dry_run let the plan through: modules %s (%s)\n", a.Modules, at)
				continue
			}
			fmt.Fprintf(w, "  no rule held the saved plan %s (%s)\n", a.Digest, at)
		default:
			fmt.Fprintf(w, "  %s (%s stage) by %s at %s %s %s\n", screentext.Field(string(a.Decision)), a.Stage, screentext.Field(a.By), at, a.Digest, screentext.Field(a.Reason))
		}
	}
}

// writeProposal writes a run's proposal: digest, counts in tofu's words,
// addresses, the rules that hold or refuse it, findings, how to release it,
// and the masked plan text when the view has it.
func writeProposal(w io.Writer, v api.RunView) {
	p := v.Proposal
	fmt.Fprintf(w, "proposal (%s stage), requested by %s\n", p.Stage, screentext.Sentence(p.Requested))
	fmt.Fprintf(w, "  digest   %s\n", p.Digest)
	if store.Stage(p.Stage) == store.StagePlan {
		fmt.Fprintf(w, "  DESTROYS %d (every delete, replacements included)\n", p.Destroy)
		fmt.Fprintf(w, "  plan:    %s\n", v.Counts)
		writeAddresses(w, p.Addresses)
		writeChangesHint(w, v)
	}
	writeHolds(w, v)
	for _, h := range p.Refusals {
		fmt.Fprintf(w, "  refused by rule %s: %s\n", screentext.Field(h.Rule), screentext.Sentence(h.Reason))
	}
	writeRelease(w, v)
	if p.PlanText != "" {
		fmt.Fprintf(w, "plan (masked):\n%s", p.PlanText)
	}
}

// writeChangesHint names the command that shows the plan's change set,
// when it has one.
func writeChangesHint(w io.Writer, v api.RunView) {
	if v.Changes != nil {
		fmt.Fprintf(w, "  changes: show %s --changes (risk first; sensitive values as fingerprints)\n", v.ID)
	}
}

// writeAddresses writes the plan's addresses by action, actions sorted,
// each escaped as one unit (screentext.Field), then a LOOKALIKE line for
// every address a person could take for another (screentext.Lookalikes).
func writeAddresses(w io.Writer, addrs map[string][]string) {
	actions := make([]string, 0, len(addrs))
	for a := range addrs {
		actions = append(actions, a)
	}
	sort.Strings(actions)
	for _, a := range actions {
		shown := make([]string, len(addrs[a]))
		for i, addr := range addrs[a] {
			shown[i] = screentext.Field(addr)
		}
		fmt.Fprintf(w, "  %s: %s\n", a, strings.Join(shown, ", "))
	}
	for _, l := range api.Lookalikes(addrs) {
		fmt.Fprintf(w, "  LOOKALIKE %s %s\n", screentext.Field(l.Address), l)
	}
}

// writeHolds writes the rules that hold the proposal: those still holding
// it with whom each waits for, the released ones with who released them.
func writeHolds(w io.Writer, v api.RunView) {
	for _, h := range v.Holds {
		if h.ReleasedBy != "" {
			fmt.Fprintf(w, "  released rule %s (%s) by %s\n", screentext.Field(h.Rule), screentext.Sentence(h.Reason), screentext.Field(h.ReleasedBy))
			continue
		}
		switch store.Status(v.Run.Status) {
		case store.StatusRefused: // a refused run was never held: the rule would have held it
			fmt.Fprintf(w, "  rule %s would also have held it: %s\n", screentext.Field(h.Rule), screentext.Sentence(h.Reason))
		case store.StatusAwaitingApproval:
			fmt.Fprintf(w, "  held by rule %s: %s; waits for %s\n", screentext.Field(h.Rule), screentext.Sentence(h.Reason), screentext.Sentence(h.WaitsFor))
		default:
			fmt.Fprintf(w, "  held by rule %s: %s\n", screentext.Field(h.Rule), screentext.Sentence(h.Reason))
		}
	}
}

// writeRelease says how the held proposal is released: "waiting for you"
// only when the caller can release something of it now.
func writeRelease(w io.Writer, v api.RunView) {
	if store.Status(v.Run.Status) != store.StatusAwaitingApproval {
		return
	}
	if v.Unapprovable != "" {
		fmt.Fprintf(w, "  CANNOT BE APPROVED: %s\n", v.Unapprovable)
		return
	}
	prefix := ""
	if v.WaitingForYou {
		prefix = "waiting for you: "
	}
	if store.Stage(v.Proposal.Stage) == store.StageScan {
		fmt.Fprintf(w, "  %snothing has planned yet; releasing it plans exactly the modules scanned, findings included: %s\n", prefix, v.Waiting)
		return
	}
	if store.Stage(v.Proposal.Stage) == store.StageRequest {
		fmt.Fprintf(w, "  %snothing has planned yet; releasing the request lets it plan: %s\n", prefix, v.Waiting)
		return
	}
	fmt.Fprintf(w, "  %sreleasing exactly this plan: %s\n", prefix, v.Waiting)
}
