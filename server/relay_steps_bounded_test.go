package server

import (
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
)

// A relay worker's step reports are bounded: a step this version does not
// run, or more steps than a run has, ends the lease failed with the reason,
// and the run keeps no more than relayMaxSteps steps. Before, the control
// node appended every step start a worker sent to the run as written, with
// any name, each one a durable write of the whole growing record: one
// worker could grow a run without end and put any text in its steps.
func TestRelayStepReportsAreBoundedToTheStepsARunHas(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, step, want string }{
		{"an invented step", "rm -rf", "a step this version does not run"},
		{"a flood of starts", "plan", "more steps than a run has"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, keys, _ := relayHarness(t, "")
			raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
			raw.Send(relay.Msg{Type: relay.MsgPoll})
			id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=x", "--json"))
			if m := raw.Recv(); m.Type != relay.MsgOffer || m.Run != id {
				t.Fatalf("offer %+v, want run %s", m, id)
			}
			raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
			job := raw.Recv()
			if job.Type != relay.MsgJob || job.Run != id {
				t.Fatalf("job %+v", job)
			}
			for i := 0; i < 4*relayMaxSteps; i++ {
				raw.Send(relay.Msg{Type: relay.MsgStep, Run: id, Token: job.Token, Step: c.step, Started: time.Now()})
			}
			h.waitStatus(id, StatusFailed, StatusSucceeded)
			r, err := h.srv.db.GetRun(id)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Steps) > relayMaxSteps {
				t.Errorf("the run keeps %d steps a worker reported, more than %d", len(r.Steps), relayMaxSteps)
			}
			for _, s := range r.Steps {
				if s.Name == "rm -rf" {
					t.Errorf("the run records a step %q no version runs", s.Name)
				}
			}
			if !strings.Contains(r.Message, c.want) || !strings.Contains(r.Message, "w2") {
				t.Errorf("the run ended %s with %q, want the worker named and %q", r.Status, r.Message, c.want)
			}
		})
	}
}
