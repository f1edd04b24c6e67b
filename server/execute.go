package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// Names of files in a run's private directory (DataDir/runs/ID, mode 0700).
const (
	planFileName = "plan.tfplan" // the saved plan, plaintext only while a tool reads it
	planJSONName = "plan.json"   // never written; listed so a stray copy is wiped at start
)

// blobPlan is the store's kind for a sealed saved plan, keyed by run ID.
const blobPlan = "plan"

// credentialCommandTimeout bounds a command-source credential.
const credentialCommandTimeout = 60 * time.Second

// execution is one phase of one run being carried out.
type execution struct {
	s       *Server
	run     store.Run
	dir     string // working directory inside the checkout
	private string // the run's private directory
	binary  string
	engine  exec.Engine
	env     []string
	masker  *mask.Masker
	sink    *logSink
	out     *mask.Writer
}

// execute is the scheduler's job function: it claims a queued run and
// carries out its current phase.
func (s *Server) execute(ctx context.Context, j job) {
	run, err := s.db.UpdateRun(j.runID, func(r *store.Run) error {
		if r.Status != StatusQueued {
			return store.ErrConflict
		}
		r.Status = StatusRunning
		if r.StartedAt.IsZero() {
			r.StartedAt = time.Now()
		}
		return nil
	})
	if err != nil {
		if !errors.Is(err, store.ErrConflict) {
			s.log.Error("claiming run", "run", j.runID, "err", err)
		}
		return
	}
	s.broker.runChanged()
	x, err := s.prepare(ctx, run)
	if err != nil {
		if x != nil {
			x.say("%v", err)
			x.close()
		}
		s.dropSealedPlan(run.ID)
		s.finish(run.ID, StatusFailed, err.Error(), -1)
		return
	}
	defer x.close()
	if run.Phase == phaseApply {
		s.applyPhase(ctx, x)
	} else {
		s.planPhase(ctx, x)
	}
}

// prepare resolves everything a run's processes need before any starts: the
// working directory (refusing escapes), the tool binary on the run's PATH,
// credentials (command-source ones run now), sealed answers, the masker and
// the environment. The returned execution is non-nil once its log is open.
func (s *Server) prepare(ctx context.Context, r store.Run) (*execution, error) {
	m := mask.New()
	sink := newLogSink(r.ID, s.db, s.broker)
	x := &execution{s: s, run: r, masker: m, sink: sink, out: m.NewWriter(sink)}
	t := s.cfg.Templates[r.Template]
	if t == nil {
		return x, fmt.Errorf("template %q is no longer configured; nothing ran", r.Template)
	}
	wd, err := s.workdir(r)
	if err != nil {
		return x, fmt.Errorf("%v; nothing ran", err)
	}
	x.dir = wd
	x.private = filepath.Join(s.runsDir, r.ID)
	if err := os.MkdirAll(x.private, 0o700); err != nil {
		return x, fmt.Errorf("creating the run's private directory: %w", err)
	}
	if err := os.Chmod(x.private, 0o700); err != nil {
		return x, fmt.Errorf("restricting the run's private directory: %w", err)
	}
	x.engine, err = exec.EngineFor(r.Tool)
	if err != nil {
		return x, err
	}
	x.binary, err = x.engine.Find(envValue(s.env, "PATH"))
	if err != nil {
		return x, err
	}
	creds, err := s.credentials(ctx, t, m)
	if err != nil {
		return x, err
	}
	vars := map[string]string{}
	for k, v := range r.Vars {
		vars[k] = v
	}
	if len(r.SealedVars) > 0 {
		plain, _, err := seal.Open(s.key, r.ID, r.SealedVars)
		if err != nil {
			return x, fmt.Errorf("opening the run's sealed answers: %w", err)
		}
		var secret map[string]string
		if err := json.Unmarshal(plain, &secret); err != nil {
			return x, fmt.Errorf("reading the run's sealed answers: %w", err)
		}
		for k, v := range secret {
			m.Add(v)
			vars[k] = v
		}
	}
	creds[runMarkerVar] = s.runMarker(r.ID)
	x.env = exec.BuildEnv(exec.EnvSpec{Base: s.env, Vars: vars, Env: creds})
	return x, nil
}

// credentials resolves a template's credentials into environment entries
// (spec "How values reach the configuration"): env credentials as given, a
// token credential as SWITCHTENDER_TOKEN, a command-source credential by
// running its command now, for this run. Every value is added to the masker
// before any process prints. A failing command fails the run before any tool
// process starts; its error names the credential, never the output.
func (s *Server) credentials(ctx context.Context, t *config.Template, m *mask.Masker) (map[string]string, error) {
	env := map[string]string{}
	for _, name := range t.Credentials {
		c := s.cfg.Credentials[name]
		if c == nil {
			return nil, fmt.Errorf("credential %q of template %q is not configured", name, t.Name)
		}
		for k, v := range c.Env {
			m.Add(v)
			env[k] = v
		}
		if c.Token != "" {
			m.Add(c.Token)
			env["SWITCHTENDER_TOKEN"] = c.Token
		}
		if len(c.Command) > 0 {
			v, err := runCredentialCommand(ctx, s.env, c)
			if err != nil {
				return nil, err
			}
			m.Add(v)
			env[c.EnvVar] = v
		}
	}
	return env, nil
}

func runCredentialCommand(ctx context.Context, environ []string, c *config.Credential) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, credentialCommandTimeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, c.Command[0], c.Command[1:]...)
	cmd.Env = environ
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("credential %q: its command %q failed (%v); fix the command or its access, then launch again. Nothing ran", c.Name, c.Command[0], err)
	}
	v := strings.TrimRight(stdout.String(), "\r\n")
	if v == "" {
		return "", fmt.Errorf("credential %q: its command %q printed nothing; nothing ran", c.Name, c.Command[0])
	}
	return v, nil
}

// say writes a line of Switchtender's own into the run's log, masked.
func (x *execution) say(format string, args ...any) {
	fmt.Fprintf(x.out, "switchtender: "+format+"\n", args...)
}

// finish records the run's status once everything it printed is stored,
// so a follower that stops at the status change has the whole log.
func (x *execution) finish(status, msg string, exit int) {
	x.out.Flush()
	if err := x.sink.Flush(); err != nil {
		x.s.log.Error("storing the end of a run's log", "run", x.run.ID, "err", err)
	}
	x.s.setStatus(x.run.ID, status, msg, exit)
	x.sink.Close() // followers stop here; what follows is bookkeeping
	x.s.audit(x.run.ID, "switchtender", status, msg)
}

// close flushes the masker and the sink and tells followers the log
// stopped growing for now.
func (x *execution) close() {
	x.out.Flush()
	x.sink.Close()
}

// step runs one tool process, its output masked into the log.
func (x *execution) step(ctx context.Context, name string, args []string) (exec.Result, error) {
	fmt.Fprintf(x.out, "$ %s %s\n", x.engine.Binary, strings.Join(args, " "))
	started := time.Now()
	res, err := exec.Run(ctx, exec.Invocation{
		Binary: x.binary, Dir: x.dir, Env: x.env, Args: args,
		Output: x.out, Grace: x.s.cfg.Server.CancelGrace,
	})
	x.out.Flush()
	x.recordStep(name, res.ExitCode, started)
	return res, err
}

func (x *execution) recordStep(name string, code int, started time.Time) {
	if _, err := x.s.db.UpdateRun(x.run.ID, func(r *store.Run) error {
		r.Steps = append(r.Steps, store.Step{Name: name, ExitCode: code, Started: started, Finished: time.Now()})
		r.ExitCode = code
		return nil
	}); err != nil {
		x.s.log.Error("recording step", "run", x.run.ID, "err", err)
	}
}

// stopped records how a step that did not run to success ended: cancelled,
// or failed with its exit code. It reports whether the run is over.
func (x *execution) stopped(step string, res exec.Result, err error) bool {
	switch {
	case err != nil && errors.Is(err, context.Canceled) && x.s.closing.Load():
		x.say("%s was interrupted because the server is stopping", step)
		x.finish(StatusInterrupted, fmt.Sprintf("The server stopped during %s; the tool was sent an interrupt so it could release its state lock. It was not re-run: check the state, then submit it again.", step), res.ExitCode)
		return true
	case err != nil && errors.Is(err, context.Canceled):
		x.say("%s was interrupted; the run is cancelled", step)
		x.finish(StatusCancelled, fmt.Sprintf("Cancelled during %s; the tool was sent an interrupt so it could release its state lock.", step), res.ExitCode)
		return true
	case err != nil:
		x.say("%s could not run: %v", step, err)
		x.finish(StatusFailed, fmt.Sprintf("%s could not run: %v", step, err), -1)
		return true
	case res.ExitCode != 0:
		x.finish(StatusFailed, fmt.Sprintf("%s failed with exit code %d; see the log.", step, res.ExitCode), res.ExitCode)
		return true
	}
	return false
}

// planPhase runs init, then the ungated apply, the dry run's plan, or the
// gated apply's plan (spec "What runs", "A gated apply carries out the
// approved plan").
func (s *Server) planPhase(ctx context.Context, x *execution) {
	r := x.run
	res, err := x.step(ctx, "init", exec.InitArgs(true))
	if x.stopped("init", res, err) {
		return
	}
	switch {
	case r.Kind == KindPlan:
		planPath := filepath.Join(x.private, planFileName)
		defer wipe(s, planPath)
		res, err := x.step(ctx, "plan", exec.PlanArgs(planPath))
		if x.stopped("plan", res, err) {
			return
		}
		x.finish(StatusSucceeded, "Dry run complete: the plan above previews the change; nothing was applied.", res.ExitCode)
	case !gate.NeedsSavedPlan(s.rules, s.gateRequest(r)):
		res, err := x.step(ctx, "apply", exec.ApplyAutoArgs())
		if x.stopped("apply", res, err) {
			return
		}
		x.finish(StatusSucceeded, "Applied.", res.ExitCode)
	default:
		s.gatedPlan(ctx, x)
	}
}

// wipe removes a plaintext plan file, logging (not failing) on error.
func wipe(s *Server, path string) {
	if err := seal.Wipe(path); err != nil {
		s.log.Error("wiping plaintext plan", "path", path, "err", err)
	}
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
