package server

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

const approveAllData = testkit.ApproveAllData

const dataTemplates = testkit.DataTemplates

func (h *harness) show(user, id string) runView {
	h.t.Helper()
	var v runView
	if err := json.Unmarshal([]byte(h.mustSSH(user, "show", id, "--json")), &v); err != nil {
		h.t.Fatal(err)
	}
	return v
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
	cmd.Env = append(append([]string{}, testEnviron...), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
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

// OpenTofu's own refusal of a stale saved plan ends the run stale with
// "submit the apply again". The server's basis check catches every stale
// plan these tests can make before tofu sees it, so this failure path is
// produced by a wrapper that answers the apply of a saved plan the way
// OpenTofu refuses a stale one, and hands everything else to the real tofu.
func TestOpenTofusStaleRefusal(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	p := h.show("bob", "1").Proposal

	path := h.runPath()
	real, err := exec.OpenTofu.Find(path)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	wrapper := `#!/bin/sh
if [ "$1" = apply ]; then
  for last in "$@"; do :; done
  case "$last" in *.tfplan)
    printf '\nError: Saved plan is stale\n\nThe given plan file can no longer be applied because the state was changed by\nanother operation after the plan was created.\n' >&2
    exit 1 ;;
  esac
fi
exec ` + real + ` "$@"
`
	if err := os.WriteFile(filepath.Join(bin, "tofu"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	h.setRunPath(bin + ":" + path)

	h.mustSSH("bob", "approve", "1", "--digest", p.Digest)
	h.waitStatus("1", StatusStale)
	r, _ := h.srv.db.GetRun("1")
	if !strings.Contains(r.Message, "submit the apply again") || r.Steps[len(r.Steps)-1].Name != "apply" {
		t.Fatalf("run = %s %q, steps %+v", r.Status, r.Message, r.Steps)
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/data/terraform.tfstate")); err == nil {
		t.Fatalf("a refused stale plan left state")
	}
}
