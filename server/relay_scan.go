package server

import (
	"fmt"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// scanned decides on the evidence of the scan a worker ran for its leased
// run, as scanStep decides on the control node's own scans: a clean scan
// is the rules' pass and the worker is told to plan (scan_pass); a finding
// holds the run at the scan stage, or refuses a pull request's plan, and
// the worker is told the run ended (scan_stop). A run a person released
// after an earlier scan must read exactly the released evidence again, on
// whichever worker takes it: other modules or findings refuse it.
func (h *relayHub) scanned(l *relayLease, c *relay.Conn, m relay.Msg) {
	stop := func(err error, x *execution) {
		_ = c.Send(relay.Msg{Type: relay.MsgScanStop, Run: m.Run, Token: m.Token, Message: l.masker.String(err.Error())})
		h.endWith(l, x, err)
	}
	run, err := h.s.db.GetRun(l.job.runID)
	if err != nil {
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("reading the run: %v", err))
		return
	}
	x := h.execution(l, run, "scan")
	if err := h.checkScanned(l, run, m); err != nil {
		stop(err, x)
		return
	}
	l.scanDone = true
	if run.CancelRequested != "" {
		// The worker was told to cancel and reports the run cancelled
		// itself (or loses the lease after cancel_grace): the evidence is
		// not decided on.
		return
	}
	if x.run, err = h.recordPullRequestCommit(run, m.Commit); err != nil {
		stop(err, x)
		return
	}
	sc := h.evidence(l, m.Scan)
	if run.Scan != nil && scanReleased(run) {
		if err := sameEvidence(sc, run.Scan, l.worker.name); err != nil {
			stop(err, x)
			return
		}
		x.say("scan: released by %s; worker %s read the same %d %s (digest %s)", scanReleasers(run), l.worker.name, sc.Modules, plural(sc.Modules, "module", "modules"), sc.Digest)
		_ = c.Send(relay.Msg{Type: relay.MsgScanPass, Run: m.Run, Token: m.Token, Released: scanReleasers(run)})
		return
	}
	_, holds := h.s.scanFor(run)
	if l.scanWhy == scanForExemption && len(holds) == 0 && len(sc.Findings) > 0 {
		stop(end(StatusRefused, -1, "The rules changed while worker %s scanned this run: none would hold it now for what the scan found (%s), and none exempts it after a scan. Nothing planned; launch it again.", l.worker.name, findingsPhrase(sc.Findings)), x)
		return
	}
	if err := x.decideScan(sc, l.scanWhy, holds); err != nil {
		stop(err, x)
		return
	}
	_ = c.Send(relay.Msg{Type: relay.MsgScanPass, Run: m.Run, Token: m.Token})
}

// checkScanned refuses a scan message the lease does not expect: a job
// that is not scanned, a second scan, or one without its evidence.
func (h *relayHub) checkScanned(l *relayLease, run store.Run, m relay.Msg) error {
	switch {
	case l.scanWhy == "":
		return end(StatusFailed, -1, "Worker %s sent a scan for a job that is not scanned; nothing of it was kept and nothing planned.", l.worker.name)
	case l.scanDone:
		return end(StatusFailed, -1, "Worker %s sent a second scan for one job; the run was failed rather than decided twice.", l.worker.name)
	case m.Scan == nil || m.Scan.Digest == "" || m.Scan.Modules < 1:
		return end(StatusFailed, -1, "Worker %s sent a scan without its evidence (a digest and the modules read); nothing planned.", l.worker.name)
	case l.scanWhy == scanForPullRequest && (run.Commit == nil || m.Commit == nil || m.Commit.SHA == ""):
		return end(StatusFailed, -1, "Worker %s scanned a pull request's plan without naming the commit it exported; nothing planned.", l.worker.name)
	}
	return nil
}

// recordPullRequestCommit records the commit a worker exported for a pull
// request's plan: the control node's resolution when it had one (the
// worker's must be the same), else the worker's.
func (h *relayHub) recordPullRequestCommit(run store.Run, c *store.Commit) (store.Run, error) {
	if run.Commit == nil || run.Commit.Ref == "" {
		return run, nil
	}
	if run.Commit.SHA != "" && c.SHA != run.Commit.SHA {
		return run, end(StatusRefused, -1, "The worker exported commit %s for %s, not %s as the control node resolved it; nothing planned.", c.SHA, run.Commit.Ref, run.Commit.SHA)
	}
	r, err := h.s.db.UpdateRun(run.ID, func(r *store.Run) error { r.Commit.SHA = c.SHA; return nil })
	if err != nil {
		return run, fmt.Errorf("recording the pull request's commit: %w", err)
	}
	return r, nil
}

// evidence is a worker's scan as the run records it: the why the control
// node gave the job, the time it arrived, every reason masked again.
func (h *relayHub) evidence(l *relayLease, in *store.Scan) *store.Scan {
	sc := &store.Scan{Digest: in.Digest, Modules: in.Modules, Files: in.Files, Why: l.scanWhy, ScannedAt: time.Now(), Findings: []store.Finding{}}
	// A worker bounds its findings; one that did not is capped here, and
	// the reasons are cut only after masking.
	for _, f := range capFindings(in.Findings) {
		f.Reason = l.masker.String(f.Reason)
		sc.Findings = append(sc.Findings, f)
	}
	sc.Findings = boundFindings(sc.Findings)
	return sc
}

// sameEvidence refuses a worker's scan of a released run that read other
// modules, or found other things, than the scan a person released.
func sameEvidence(got, released *store.Scan, worker string) error {
	if got.Digest != released.Digest || !sameFindings(got.Findings, released.Findings) {
		return end(StatusRefused, -1, "Worker %s's scan read %s with %d %s, not the %s with %d that a person released, so this run cannot plan the modules they weighed; nothing planned. Launch it again to scan what the pool's checkouts hold now.",
			worker, got.Digest, len(got.Findings), plural(len(got.Findings), "finding", "findings"), released.Digest, len(released.Findings))
	}
	return nil
}
