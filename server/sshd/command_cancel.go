package sshd

import (
	"flag"
	"fmt"
	"time"

	"github.com/switchtender/switchtender/store"
)

var cancelCommand = command{
	name:    "cancel",
	example: `ssh -p 2222 HOST cancel 4 --wait`,
	usage:   "cancel RUN [--wait] [--json]",
	summary: "stop a run (tofu gets an interrupt first)",
	help: `A queued run never starts; a running one's tool gets SIGINT (so it
releases its state lock) and SIGKILL only after cancel_grace; a held one
ends. The requester may cancel their run, a person with the approve role
any run; a run that ended cannot be cancelled.

It says what it did: "run 4 was queued and will not start", "cancel
sent: run 4 stops after tofu exits", or "run 4 was held for approval and
has been cancelled". --wait waits until the run has ended and exits 0 if it
ended cancelled, 1 if it ended otherwise (it finished first).`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		wait := fs.Bool("wait", false, "wait until the run has ended")
		return func(c *call) int { return c.cancel(*wait) }
	},
}

// cancel stops a run and says what it did; with wait it waits for the end.
func (c *call) cancel(wait bool) int {
	run, was, err := c.s.CancelRun(c.ctx, c.id, c.arg(0))
	if err != nil {
		return c.refuse(err)
	}
	if !c.json {
		fmt.Fprintln(c.out, cancelReply(run.ID, was, c.s.Config().Server.CancelGrace, wait))
	}
	if !wait {
		return c.printRun(run, false)
	}
	if run, err = c.waitEnd(run.ID); err != nil {
		return c.refuse(err)
	}
	code := c.printRun(run, false)
	if store.Status(run.Status) != store.StatusCancelled {
		code = exitRefused
	}
	return code
}

// cancelReply is the sentence cancel answers with, for a run that was
// queued, running or held when the cancel took hold; waiting leaves out
// how to wait for the end.
func cancelReply(id string, was store.Status, grace time.Duration, waiting bool) string {
	switch was {
	case store.StatusQueued:
		return fmt.Sprintf("run %s was queued and will not start", id)
	case store.StatusRunning:
		sent := fmt.Sprintf("cancel sent: run %s stops after tofu exits (it got an interrupt; a kill follows after %s)", id, grace)
		if waiting {
			return sent + "; waiting for the end"
		}
		return sent + fmt.Sprintf("; `log %s --follow` waits for the end", id)
	case store.StatusAwaitingApproval:
		return fmt.Sprintf("run %s was held for approval and has been cancelled; its saved plan is dropped", id)
	}
	return fmt.Sprintf("run %s was %s and has been cancelled", id, was)
}

// waitEnd waits until run id is no longer queued or running (it ended, or
// waits for approval) and returns it as it is then.
func (c *call) waitEnd(id string) (store.Run, error) {
	if err := c.s.FollowLog(c.ctx, id, 0, func(store.Chunk) error { return nil }); err != nil {
		return store.Run{}, err
	}
	return c.s.Run(id)
}
