package runstep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// The steps that carry out a released saved plan, wherever it applies
// (spec "A gated apply carries out the approved plan"): the configuration
// the plan was made from is read out of the plan and the working
// directory checked against it before any process of the apply phase
// (Weigh, CheckPlanned); the plan is written only into the run's private
// directory (WritePlan); its digest must be the released one (VerifyPlan);
// its sensitive values join the masker (MaskPlan); and apply PLANFILE
// carries out exactly that file (ApplyPlan).

// ErrStale is OpenTofu's refusal of a saved plan whose state changed.
var ErrStale = errors.New("saved plan is stale")

// Weigh reads the identity of the configuration the saved plan (in
// memory) was made from, with the files under its working directory the
// plan was made in (startFiles: store.Proposal.StartFiles). A plan whose
// snapshot cannot be read is an *Outcome refusing the apply.
func Weigh(plan []byte, startFiles map[string]string) (*scan.Identity, error) {
	want, err := scan.PlanIdentity(plan)
	if err != nil {
		return nil, End(store.StatusFailed, -1, "Refused to apply: the saved plan's configuration snapshot cannot be read (%v), so the working directory cannot be checked against it; nothing ran and nothing was applied.", err)
	}
	if want, err = want.WithStartFiles(startFiles); err != nil {
		return nil, End(store.StatusFailed, -1, "Refused to apply: %v, so the working directory cannot be checked against the plan; nothing ran and nothing was applied.", err)
	}
	return &want, nil
}

// CheckPlanned checks, before process step of the apply phase starts in
// dir, that dir holds the configuration planned (nil: nothing planned
// yet, which passes); command is the run's working directory as launched,
// for the sentence. An *Outcome naming what changed when it does not.
func CheckPlanned(planned *scan.Identity, dir, step, command string) error {
	if planned == nil {
		return nil
	}
	got, err := scan.DirIdentity(dir)
	if err != nil {
		return End(store.StatusFailed, -1, "Refused before %s: the configuration in %s cannot be read to check it against the one the plan was made from (%v); nothing more ran and nothing was applied. Fix the checkout, then submit the run again.", step, command, err)
	}
	return ChangedSince(planned, got, step, command)
}

// WritePlan writes the plaintext plan into the run's private directory
// and returns its path; the caller wipes it however the run ends.
func WritePlan(env Env, plan []byte) (string, error) {
	path, err := seal.WriteFile(env.Private(), PlanFileName, plan)
	if err != nil {
		return "", fmt.Errorf("writing the saved plan into the run's private directory: %w", err)
	}
	return path, nil
}

// VerifyPlan refuses the plan file at path unless its digest is the
// released one, approved.
func VerifyPlan(path, approved string) error {
	if d, err := seal.FileDigest(path); err != nil || d != approved {
		return End(store.StatusFailed, -1, "Refused to apply: the plan file in the private directory is not the released %s; nothing was applied.", approved)
	}
	return nil
}

// MaskPlan adds the values the saved plan at path marks sensitive to the
// masker before the tool prints anything; a plan whose values cannot be
// read is an *Outcome refusing the apply.
func MaskPlan(ctx context.Context, env Env, path string) error {
	planJSON, err := env.Capture(ctx, "show -json", exec.ShowJSONArgs(path))
	if err != nil {
		return err
	}
	sens, err := gate.SensitiveValues(planJSON)
	clear(planJSON)
	if err != nil {
		return End(store.StatusFailed, -1, "Refused to apply: the saved plan's sensitive values could not be read (%v), so they could not be masked; nothing was applied.", err)
	}
	env.Masker().Add(sens...)
	return nil
}

// ApplyPlan checks the plan file at path once more just before the tool
// starts (VerifyPlan), then runs apply PLANFILE. OpenTofu's own refusal of
// a stale plan is ErrStale.
func ApplyPlan(ctx context.Context, env Env, path, approved string) (exec.Result, error) {
	if err := VerifyPlan(path, approved); err != nil {
		return exec.Result{ExitCode: -1}, err
	}
	res, err := env.Tool(ctx, "apply", exec.ApplyPlanArgs(path))
	if err != nil && res.Stale && ctx.Err() == nil {
		return res, fmt.Errorf("%w (exit %d)", ErrStale, res.ExitCode)
	}
	return res, err
}

// StateSecrets adds the values the working directory's current state
// marks sensitive to the masker before plan or apply prints a diff. A
// local state is read from its file (cheap, and exactly what tofu reads);
// any other backend through `state pull`, never logged. A state that
// cannot be read fails the run: unmasked values could reach the log.
func StateSecrets(ctx context.Context, env Env) error {
	state, err := ReadState(ctx, env)
	defer clear(state)
	if err != nil {
		return err
	}
	values, err := gate.StateSensitiveValues(state)
	if err != nil {
		return fmt.Errorf("%v; nothing ran past init, since the values the state marks sensitive could not be masked", err)
	}
	env.Masker().Add(values...)
	return nil
}

// StateSecretsStep is StateSecrets as a step of either executor.
func StateSecretsStep[E Env]() Step[E] {
	return Step[E]{Name: "state secrets", Do: func(ctx context.Context, env E) error { return StateSecrets(ctx, env) }}
}

// ReadState reads the working directory's current state document: a
// local state from its file (none yet is nil), any other by `state pull`.
func ReadState(ctx context.Context, env Env) ([]byte, error) {
	if path, ok := LocalStatePath(env.Dir()); ok {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the local state %s: %w", path, err)
		}
		return b, nil
	}
	return env.Capture(ctx, "state pull", exec.StatePullArgs())
}

// LocalStatePath returns where the local backend keeps the working
// directory's state in the default workspace (terraform.tfstate, or the
// backend's "path" setting), or false when init configured another backend
// or a workspace is selected: then only `state pull` is sure.
func LocalStatePath(dir string) (string, bool) {
	var backend struct {
		Backend *struct {
			Type   string         `json:"type"`
			Config map[string]any `json:"config"`
		} `json:"backend"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".terraform", "terraform.tfstate")); err == nil {
		if json.Unmarshal(b, &backend) != nil {
			return "", false
		}
	}
	ws := "default"
	if b, err := os.ReadFile(filepath.Join(dir, ".terraform", "environment")); err == nil {
		ws = strings.TrimSpace(string(b))
	}
	be := backend.Backend
	if (be != nil && be.Type != "local") || (ws != "default" && ws != "") {
		// Another backend, or a workspace (whose directory workspace_dir may
		// move): only the tool knows for sure, so state pull reads it.
		return "", false
	}
	if be != nil {
		if p, ok := be.Config["path"].(string); ok && p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			return p, true
		}
	}
	return filepath.Join(dir, "terraform.tfstate"), true
}

// ChangedSince is the *Outcome refusing the process step when the
// configuration got in working directory command differs from want, the
// one the plan was made from; nil when they are the same.
func ChangedSince(want *scan.Identity, got scan.Identity, step, command string) error {
	diff := want.Diff(got)
	if len(diff) == 0 {
		return nil
	}
	return End(store.StatusFailed, -1, "Refused before %s: the configuration in %s is not the one the plan was made from: %s. Nothing more ran and nothing was applied; submit the run again to plan what the checkout holds now.", step, command, strings.Join(diff, "; "))
}
