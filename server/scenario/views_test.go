package scenario

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

// Reading runs as people and tools do: their JSON, and OpenTofu's state.

// show is `show --json` of run id as user sees it.
func (h *harness) show(user, id string) api.RunView {
	h.t.Helper()
	var v api.RunView
	if err := json.Unmarshal([]byte(h.mustSSH(user, "show", id, "--json")), &v); err != nil {
		h.t.Fatal(err)
	}
	return v
}

// showRaw is `show --json` of run id as user sees it, decoded as a map.
func (h *harness) showRaw(user, id string) map[string]any {
	h.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(h.mustSSH(user, "show", id, "--json")), &m); err != nil {
		h.t.Fatal(err)
	}
	return m
}

// tofuByHand runs OpenTofu in a working directory of the project as a
// person would, outside Switchtender.
func (h *harness) tofuByHand(dir string, args ...string) {
	h.t.Helper()
	bin, err := osexec.LookPath("tofu")
	for _, p := range filepath.SplitList(h.runPath()) {
		if c := filepath.Join(p, "tofu"); err != nil {
			if _, serr := os.Stat(c); serr == nil {
				bin, err = c, nil
			}
		}
	}
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := osexec.Command(bin, args...)
	cmd.Dir = filepath.Join(h.project, dir)
	cmd.Env = append(append([]string{}, testkit.Environ()...), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		h.t.Fatalf("tofu %v by hand: %v\n%s", args, err, out)
	}
}

// stateCount is how many terraform_data.server instances the local state of
// infra/data holds.
func (h *harness) stateCount() int {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.project, "infra/data/terraform.tfstate"))
	if err != nil {
		h.t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Name      string
			Instances []json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		h.t.Fatal(err)
	}
	for _, r := range st.Resources {
		if r.Name == "server" {
			return len(r.Instances)
		}
	}
	return 0
}

// launchWait launches args as user with --wait and returns the run as
// launch --json prints it.
func (h *harness) launchWait(user string, args ...string) api.RunView {
	h.t.Helper()
	out, errOut, _ := h.ssh(user, append(append([]string{"launch"}, args...), "--wait", "--json")...)
	var v api.RunView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		h.t.Fatalf("launch %v: %v\n%s%s", args, err, out, errOut)
	}
	return v
}

func stepNames(v api.RunView) []string { return testkit.StepNames(v) }

// scanHarness is a server whose rule "review" holds every run for bob but
// exempts dry runs by exclude_dry_run, with a template per scan fixture.
func scanHarness(t *testing.T, extra string) *harness {
	t.Helper()
	h := newHarness(t, testkit.ScanConfig()+extra)
	if err := os.CopyFS(filepath.Join(h.project, "infra", "scan"), os.DirFS(testdata+"/scan")); err != nil {
		t.Fatal(err)
	}
	return h
}

// identity is who the harness's configuration says name is.
func (h *harness) identity(name string) server.Identity {
	id := server.Identity{Name: name}
	if u := h.srv.Config().Users[name]; u != nil {
		id.Roles = u.Roles
	} else {
		id.Agent = true
	}
	return id
}
