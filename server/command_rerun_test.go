package server

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// secretData is a template whose survey has a sensitive answer, for rerun.
const secretData = `
template "secret-data" {
  project = "infra"
  command = "infra/data"
  survey "instances" {
    type    = "number"
    default = 1
  }
  survey "note" {
    type      = "string"
    sensitive = true
  }
}
`

// rerun repeats a run that ended: the same template, kind and answers (a
// secret one reused sealed, never shown), and says which run it repeats,
// in text and JSON. --wait streams the new run and exits 0 when it
// succeeded.
func TestRerunCommand(t *testing.T) {
	const canary = "rerun-canary-5e1d0a"
	h := newHarness(t, secretData)
	h.mustSSH("alice", "launch", "secret-data", "--var", "note="+canary, "--var", "instances=2", "--wait")
	out := h.mustSSH("alice", "rerun", "1", "--wait")
	mustContain(t, "rerun 1 --wait", out, "run 2 queued (apply of secret-data)", "run 2: succeeded", "a rerun of run 1", "$ tofu init")
	var v runView
	if err := json.Unmarshal([]byte(h.mustSSH("carol", "rerun", "2", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.ID != "3" || v.RerunOf != "2" || Kind(v.Kind) != KindApply || v.Template != "secret-data" || v.Answers["instances"] != "2" {
		t.Fatalf("rerun 2 --json = %+v", v)
	}
	h.waitStatus("3", StatusSucceeded)
	for _, id := range []string{"2", "3"} {
		r, err := h.srv.db.GetRun(id)
		if err != nil {
			t.Fatal(err)
		}
		secret, err := openSealedMap(h.srv.key, id, r.SealedAnswers)
		if err != nil || secret["note"] != canary {
			t.Errorf("run %s's sealed answers: %v (note reused: %v)", id, err, secret["note"] == canary)
		}
		if len(r.SecretVars) != 1 || r.SecretVars[0] != "note" {
			t.Errorf("run %s's secret variables = %v", id, r.SecretVars)
		}
	}
	shown := out + h.mustSSH("bob", "show", "3") + h.mustSSH("bob", "show", "3", "--json") + h.mustSSH("bob", "runs", "--json")
	mustLack(t, "rerun output and views", shown, canary)
	mustContain(t, "show 3", h.mustSSH("bob", "show", "3"), "a rerun of run 2", "var note = (sensitive)")
}

// rerun is refused, exit 1 with one sentence, for a run that has not
// ended, a run that does not exist, someone who may not launch, and a
// template whose survey changed incompatibly (naming the field); nothing is
// queued by a refusal.
func TestRerunRefusals(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	cases := []struct {
		user string
		id   string
		want string
	}{
		{"alice", "1", "run 1 is awaiting approval; rerun repeats a run that ended"},
		{"alice", "42", `no run "42"`},
	}
	for _, c := range cases {
		out, errOut, code := h.ssh(c.user, "rerun", c.id)
		if code != exitRefused || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%s rerun %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.user, c.id, code, out, errOut, c.want)
		}
	}
	h.mustSSH("bob", "reject", "1", "--reason", "not now")
	if _, errOut, code := h.ssh("bob", "rerun", "1"); code != exitRefused || !strings.Contains(errOut, "launch role is missing") {
		t.Errorf("bob (no launch role) rerun 1: exit %d %q", code, errOut)
	}

	// The template gains a required field: the rerun cannot repeat the
	// answers as they were, and says which field.
	cfg, err := os.ReadFile(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(cfg), `survey "generation" {`, "survey \"owner\" {\n    type = \"string\"\n  }\n  survey \"generation\" {", 1)
	if changed == string(cfg) {
		t.Fatal("could not change the template")
	}
	if err := os.WriteFile(h.cfgPath, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	h.restart()
	if _, errOut, code := h.ssh("alice", "rerun", "1"); code != exitRefused || !strings.Contains(errOut, "cannot be rerun as it was") || !strings.Contains(errOut, "owner") {
		t.Errorf("rerun after the survey changed: exit %d %q", code, errOut)
	}
	if runs, err := h.srv.db.ListRuns(); err != nil || len(runs) != 1 {
		t.Fatalf("refused reruns queued runs: %v, %d runs", err, len(runs))
	}
}
