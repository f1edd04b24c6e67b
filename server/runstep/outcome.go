// Package runstep is what both executors of a run share: the control
// node's and a relay worker's. A run is a list of [Step]s that [Run]
// carries out over an [Env], the executor's own way of starting tool
// processes, writing the run's log and keeping its masker; the steps and
// checks in this package (the saved plan's digest, writing and masking it,
// the state's sensitive values, the configuration the plan was made from,
// the scan's private copy, a pull request's export) touch nothing else,
// so each invariant is checked, and each refusal worded, in one place.
package runstep

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchtender/switchtender/store"
)

// Outcome ends a run's steps with a status and a sentence for people.
type Outcome struct {
	Status store.Status
	Msg    string
	Exit   int // the tool's exit code, or -1
}

func (o *Outcome) Error() string { return o.Msg }

// End is an *Outcome ending the run with status, the tool's exit code
// (or -1) and the sentence format makes of args.
func End(status store.Status, exit int, format string, args ...any) error {
	return &Outcome{Status: status, Msg: fmt.Sprintf(format, args...), Exit: exit}
}

// StepFailed is a tool process that exited non-zero.
type StepFailed struct {
	Step string
	Exit int
}

func (e *StepFailed) Error() string {
	return fmt.Sprintf("%s failed with exit code %d; see the log.", e.Step, e.Exit)
}

// ExitOf is the exit code err carries: a failed step's or an outcome's,
// or -1.
func ExitOf(err error) int {
	var sf *StepFailed
	var o *Outcome
	switch {
	case errors.As(err, &sf):
		return sf.Exit
	case errors.As(err, &o):
		return o.Exit
	}
	return -1
}

// SentenceError is an error that is a whole sentence for people (a run's
// message), capitalised and punctuated as the run shows it.
type SentenceError string

func (e SentenceError) Error() string { return string(e) }

// Refusedf is a refusal sentence for a run's message.
func Refusedf(format string, args ...any) error {
	return SentenceError(fmt.Sprintf(format, args...))
}

// IsContextEnd reports whether err is a context's end.
func IsContextEnd(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
