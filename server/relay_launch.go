package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// checkRelayLaunch validates a launch of a template whose queue a pool's
// workers execute. The checkout is on the workers, so the working
// directory is checked there; here only the command's shape. A pull
// request's --ref is resolved in the control node's copy of the checkout
// when it has one (the workers must hold that commit), otherwise by the
// worker that takes the run. A gated apply or a drift check on a pool
// without a delivery key is refused before anything plans, with a
// sentence saying what to do.
func (s *Server) checkRelayLaunch(who Identity, req LaunchRequest, t *config.Template, kind Kind, pool string) (*launchPlan, error) {
	if err := exec.CheckCommand(t.Command); err != nil {
		return nil, errorf(ErrInvalid, "template %q: refusing working directory: %v", t.Name, err)
	}
	probe := store.Run{Template: t.Name, Project: t.Project, Kind: kind, Requester: who.Name,
		RequesterKind: RequesterPerson, RequireApproval: req.RequireApproval, AIProposal: req.AIProposal}
	if who.Agent {
		probe.RequesterKind = RequesterAgent
	}
	if err := s.relayRefusal(probe, t, pool); err != nil {
		return nil, err
	}
	// The control node reads which variables are sensitive from its own
	// copy of the checkout when it has one; otherwise every answer is
	// treated as secret (sealed, masked).
	wd, _ := s.workdir(store.Run{Project: t.Project, Command: t.Command})
	vals, err := resolveVars(t, req.Answers, secretNames(wd, req.Secret))
	if err != nil {
		return nil, err
	}
	lp := &launchPlan{t: t, kind: kind, vals: vals}
	if req.Ref != "" {
		if lp.commit, err = s.relayRef(t.Project, req.Ref, kind); err != nil {
			return nil, err
		}
	}
	return lp, nil
}

// relayRef is a pool run's pull-request commit: resolved in the control
// node's checkout when it is a git repository, else the ref alone (checked
// for its form), which the worker resolves in its own.
func (s *Server) relayRef(project, ref string, kind Kind) (*store.Commit, error) {
	p, ok := s.config().Projects[project]
	if kind != KindPlan || ok && vcs.IsRepository(context.Background(), p.Path) {
		return s.resolveRef(context.Background(), project, ref, kind) // it refuses a --ref on another kind
	}
	if err := vcs.CheckRef(ref); err != nil {
		return nil, errorf(ErrInvalid, "--ref: %v", err)
	}
	return &store.Commit{Ref: ref}, nil
}

// relayRefusal says why a pool cannot take this run, or returns nil: a
// gated apply or a drift check needs the pool's delivery key.
func (s *Server) relayRefusal(probe store.Run, t *config.Template, pool string) error {
	where := fmt.Sprintf("template %q runs on pool %s", t.Name, pool)
	instead := "point the template at a queue the control node executes for it"
	if probe.Kind == KindCheck || probe.Kind == KindApply && gate.NeedsSavedPlan(s.currentRules(), s.gateRequest(probe)) {
		if p := s.config().Pools[pool]; p == nil || p.DeliveryKey == "" {
			what := "a gated apply: a rule covers this apply, and its saved plan"
			if probe.Kind == KindCheck {
				what = "a drift check: the plan it keeps for a reconcile"
			}
			return errorf(ErrInvalid, "%s, and pool %s has no delivery_key, so it cannot run %s could reach the apply's worker only sealed to the pool's delivery key. Nothing planned. Add delivery_key (`switchtender keygen pool --out FILE`) to the pool, or %s", where, pool, what, instead)
		}
	}
	return nil
}

// poolTemplateProblems is what serve warns and check reports about a
// template on a pool's queue: a working directory whose state each
// worker's checkout would hold apart, and a pool no worker can join.
func poolTemplateProblems(cfg *config.Config, t *config.Template, q *config.Queue) []string {
	var out []string
	if msg := localStateProblem(cfg, t, q.Pool); msg != "" {
		out = append(out, msg)
	}
	if p := cfg.Pools[q.Pool]; p != nil && len(p.WorkerKeys) == 0 {
		out = append(out, fmt.Sprintf("pool %s (%s): it lists no workers, so no worker can connect and runs of template %s wait in the queue; list each worker's public key in workers", p.Name, p.Line, t.Name))
	}
	return out
}

// interruptedMessage is what a run that was executing when the control
// node stopped says after the restart. A relay run's lease ended with the
// restart: its worker's further reports are rejected.
func (s *Server) interruptedMessage(r store.Run) string {
	pool := s.poolOf(r.Template)
	if pool == "" {
		return "The server stopped while this run was executing; what it left running was stopped, and it was not re-run. Check the state, then submit it again."
	}
	worker := r.AppliedBy
	if worker == "" {
		worker = r.PlannedBy
	}
	return fmt.Sprintf("The control node stopped while worker %s of pool %s executed this run; its lease ended with the restart, so what the worker reports now is rejected, and a state lock may be left. It was not re-run: check the state, then submit it again.", worker, pool)
}

// localStateProblem says when a pool template's working directory keeps
// its state in the checkout: a plan on one worker and its apply on another
// would each see their own checkout's state. It reads the control node's
// copy of the configuration for a terraform block's backend or cloud
// block; a local backend with a path is taken to be on shared storage.
func localStateProblem(cfg *config.Config, t *config.Template, pool string) string {
	p := cfg.Projects[t.Project]
	if p == nil {
		return ""
	}
	dir, err := exec.ResolveWorkingDir(p.Path, t.Command)
	if err != nil {
		return ""
	}
	backend, hasPath := backendOf(dir)
	if backend != "" && (backend != "local" || hasPath) {
		return ""
	}
	what := "declares no backend, so its state is terraform.tfstate in each worker's checkout"
	if backend == "local" {
		what = "uses the local backend without a path, so its state is in each worker's checkout"
	}
	return fmt.Sprintf("template %s (%s): its working directory %s %s; a plan on one worker of pool %s and its apply on another would see different states. Use a remote backend, or a local backend whose path is on storage the pool shares", t.Name, t.Line, t.Command, what, pool)
}

// backendOf reads dir's .tf and .tofu files for the backend a terraform
// block names ("remote" for a cloud block) and whether it sets path.
func backendOf(dir string) (string, bool) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".tf") || strings.HasSuffix(e.Name(), ".tofu")) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, e.Name(), hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if b.Type != "terraform" {
				continue
			}
			for _, inner := range b.Body.Blocks {
				switch {
				case inner.Type == "cloud":
					return "remote", false
				case inner.Type == "backend" && len(inner.Labels) == 1:
					_, hasPath := inner.Body.Attributes["path"]
					return inner.Labels[0], hasPath
				}
			}
		}
	}
	return "", false
}
