package runstep

import (
	"context"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
)

// Env is what an executor gives the steps of one run: the control node's
// execution of a run, or a relay worker's job.
type Env interface {
	// Step notes that step name executes now, for the run's messages.
	Step(name string)
	// Check is what is checked before each step (the working directory is
	// still the one resolved at launch); an error ends the run.
	Check(ctx context.Context) error
	// Tool runs one tool process named name with args in the run's working
	// directory, its output masked into the run's log, and records it as a
	// step. A process that could not run or exited non-zero is an error
	// (a *StepFailed for a non-zero exit).
	Tool(ctx context.Context, name string, args []string) (exec.Result, error)
	// Capture runs one tool process whose stdout is returned, never
	// logged; a non-zero exit is a *StepFailed.
	Capture(ctx context.Context, name string, args []string) ([]byte, error)
	// Say writes a line of Switchtender's own into the run's log, masked.
	Say(format string, args ...any)
	// Dir is the working directory the run's processes start in.
	Dir() string
	// Private is the run's private directory (mode 0700).
	Private() string
	// Masker is the run's masker: what is added to it never reaches the
	// log or a message.
	Masker() *mask.Masker
}

// Step is one thing a run does over an executor of type E (the control
// node's or the worker's, so a step reaches its own executor without a type
// assertion). Do returns nil to go on, an *Outcome to end the run with that
// status, or any other error to fail it.
type Step[E Env] struct {
	Name string
	Do   func(ctx context.Context, env E) error
}

// Run carries out steps in order over env: before each, env hears its name,
// and a context that ended or a failed env.Check stops the run there. It
// returns what stopped the steps, or nil when all of them ran.
func Run[E Env](ctx context.Context, env E, steps []Step[E]) error {
	for _, st := range steps {
		env.Step(st.Name)
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := env.Check(ctx); err != nil {
			return err
		}
		if err := st.Do(ctx, env); err != nil {
			return err
		}
	}
	return nil
}
