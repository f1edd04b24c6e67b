package scenario

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// The spec's example end to end over SSH: a dry run shows the plan, a real
// run applies it, and both survive a restart with their logs.
func TestSpecExampleOverSSH(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)

	out := h.mustSSH("alice", "launch", "network", "--dry-run", "--var", "region=eu-west-1", "--wait")
	for _, want := range []string{
		"$ tofu init -input=false -no-color",
		"-input=false -no-color -out=",
		`vpc = "vpc-eu-west-1"`,
		"run 1: succeeded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/network/terraform.tfstate")); err == nil {
		t.Errorf("a dry run wrote state")
	}

	out = h.mustSSH("alice", "launch", "network", "--var", "region=eu-west-1", "--wait")
	for _, want := range []string{"apply -auto-approve -input=false -no-color", "Apply complete!", `vpc = "vpc-eu-west-1"`, "run 2: succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	state, err := os.ReadFile(filepath.Join(h.project, "infra/network/terraform.tfstate"))
	if err != nil || !strings.Contains(string(state), "vpc-eu-west-1") {
		t.Fatalf("apply left no state with the output: %v", err)
	}

	// No plan file is left anywhere once the dry run ended.
	for _, f := range h.dataFiles() {
		if filepath.Base(f) == runstep.PlanFileName {
			t.Errorf("plan file left behind: %s", f)
		}
	}

	check := func() {
		t.Helper()
		var runs []api.RunView
		if err := json.Unmarshal([]byte(h.mustSSH("bob", "runs", "--json")), &runs); err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].ID != "2" || runs[1].ID != "1" {
			t.Fatalf("runs = %+v", runs)
		}
		if runs[0].Status != store.StatusSucceeded || runs[1].Status != store.StatusSucceeded || runs[0].Kind != store.KindApply || runs[1].Kind != store.KindPlan {
			t.Fatalf("runs = %+v", runs)
		}
		if runs[0].Vars["region"] != "eu-west-1" || runs[0].ExitCode != 0 || runs[0].FinishedAt.IsZero() {
			t.Fatalf("run 2 = %+v", runs[0])
		}
		show := h.mustSSH("bob", "show", "2")
		if !strings.Contains(show, "run 2: succeeded") || !strings.Contains(show, "var region = eu-west-1") {
			t.Errorf("show 2:\n%s", show)
		}
		log := h.mustSSH("bob", "log", "1")
		if !strings.Contains(log, `vpc = "vpc-eu-west-1"`) {
			t.Errorf("log 1 lacks the plan:\n%s", log)
		}
	}
	check()
	h.restart()
	check()
}

// Bad input is refused before anything is queued, with a sentence that
// says what was wrong.
func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate+`
template "sized" {
  project = "infra"
  command = "infra/data"
  survey "instances" {
    type = "number"
    default = 1
  }
}
template "escape" {
  project = "infra"
  command = "infra/link"
}
`)
	if err := os.Symlink(os.TempDir(), filepath.Join(h.project, "infra/link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		user string
		args []string
		want string
	}{
		{"alice", []string{"launch", "nope"}, `no template "nope"`},
		{"alice", []string{"launch", "network"}, `survey field "region" of template "network" needs an answer`},
		{"alice", []string{"launch", "network", "--var", "region=x", "--var", "zone=y"}, `has no survey field zone`},
		{"alice", []string{"launch", "sized", "--var", "instances=three"}, `wants a number, got "three"`},
		{"alice", []string{"launch", "escape"}, `outside the project checkout`},
		{"bob", []string{"launch", "network", "--var", "region=x"}, `launch role is missing`},
		{"alice", []string{"show", "42"}, `no run "42"`},
		{"alice", []string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		out, errOut, code := h.ssh(c.user, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s %v: exit %d, stderr %q, stdout %q; want refusal containing %q", c.user, c.args, code, errOut, out, c.want)
		}
	}
	runs, err := h.db().ListRuns()
	if err != nil || len(runs) != 0 {
		t.Fatalf("refused launches queued runs: %v %+v", err, runs)
	}
}

// An unknown key is refused at authentication.
func TestUnknownKeyRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	h.newKey("mallory") // a key the configuration does not name
	c, err := dialAs(h, "mallory")
	if err == nil {
		c.Close()
		t.Fatalf("handshake with an unknown key succeeded")
	}
}

// A failing command-source credential fails the run before any tool process.
func TestFailingCredentialCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
credential "vault" {
  command = ["false"]
  env_var = "VAULT_TOKEN"
}
template "creds" {
  project = "infra"
  command = "infra/creds"
  credentials = ["vault"]
}
`)
	out, _, code := h.ssh("alice", "launch", "creds", "--wait")
	if code == 0 || !strings.Contains(out, `credential "vault": its command "false" failed`) || strings.Contains(out, "$ tofu") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// A run that was executing when the server died is marked interrupted and
// never re-run; queued runs still run after a restart.
func TestRestartRecovery(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	h.mustSSH("alice", "launch", "network", "--var", "region=a", "--wait")
	h.stop()
	// What a crash leaves: one run marked running, one queued.
	db, err := store.Open(filepath.Join(h.dir, "data", "switchtender.db"))
	if err != nil {
		t.Fatal(err)
	}
	crashed := func(status store.Status) string {
		r := &store.Run{Template: "network", Project: "infra", Tool: "opentofu", Command: "infra/network",
			Queue: "default", Kind: store.KindApply, Phase: store.PhasePlan, Requester: "alice", RequesterKind: store.RequesterPerson,
			Vars: map[string]string{"region": "b"}, Status: status}
		if err := db.CreateRun(r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	running := crashed(store.StatusRunning)
	queued := crashed(store.StatusQueued)
	db.Close()
	h.start()
	h.waitStatus(running, store.StatusInterrupted)
	h.waitStatus(queued, store.StatusSucceeded)
	r, _ := h.db().GetRun(running)
	if !strings.Contains(r.Message, "not re-run") || len(r.Steps) != 0 {
		t.Errorf("interrupted run: %+v", r)
	}
}

// Malformed commands get one sentence, and run text cannot drive the
// reader's terminal.
func TestCommandOutputIsOneSentenceAndPrintable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	_, errOut, code := h.ssh("alice", "launch", "network", "--bogus")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "there is no flag --bogus") {
		t.Errorf("bad flag: exit %d %q", code, errOut)
	}
	_, errOut, code = h.ssh("alice", "launch", "network", "--dry-run", "--require-approval", "--var", "region=x")
	if code != 2 || !strings.Contains(errOut, "a dry run applies nothing") {
		t.Errorf("--dry-run --require-approval: exit %d %q", code, errOut)
	}
	h.mustSSH("alice", "launch", "network", "--dry-run", "--var", "region=\x1b[2J\x1b[Hall clear\nfake line", "--wait")
	for _, args := range [][]string{{"show", "1"}, {"log", "1"}, {"runs"}} {
		out := h.mustSSH("bob", args...)
		if strings.ContainsRune(out, 0x1b) || strings.Contains(out, "\nfake line") {
			t.Errorf("%v printed raw control characters or a forged line:\n%q", args, out)
		}
	}
	if out := h.mustSSH("bob", "show", "1"); !strings.Contains(out, `var region = \x1b[2J\x1b[Hall clear\nfake line`) {
		t.Errorf("show 1 does not escape the value as one unit:\n%s", out)
	}
}

// If init fails, the run stops there with init's result.
func TestInitFailureStopsTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "broken" {
  project = "infra"
  command = "infra/broken"
}
`)
	out, _, code := h.ssh("alice", "launch", "broken", "--wait")
	if code == 0 || !strings.Contains(out, "run 1: failed") || strings.Contains(out, "$ tofu apply") || strings.Contains(out, "$ tofu plan") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	r, _ := h.db().GetRun("1")
	if len(r.Steps) != 1 || r.Steps[0].Name != "init" || r.ExitCode == 0 || r.ExitCode != r.Steps[0].ExitCode || !strings.Contains(r.Message, "init failed") {
		t.Fatalf("run = %+v", r)
	}
}

// A vanished SSH session never stops a run (DESIGN invariant 7): the
// follower's connection is dropped mid-run and the run finishes anyway.
func TestVanishedSessionDoesNotStopTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "pause" {
  project = "infra"
  command = "infra/pause"
}
`)
	client, err := dialAs(h, "alice")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("launch pause --wait"); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		var got strings.Builder
		for {
			n, err := stdout.Read(buf)
			got.Write(buf[:n])
			if strings.Contains(got.String(), "before-pause") {
				close(seen)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run never printed before-pause")
	}
	client.Close() // the session vanishes mid-run
	h.waitStatus("1", store.StatusSucceeded)
	if log := h.mustSSH("bob", "log", "1"); !strings.Contains(log, "after-pause") || !strings.Contains(log, "Apply complete!") {
		t.Fatalf("the run's log after its follower vanished:\n%s", log)
	}
}

// An answer for a variable the configuration declares sensitive is a
// secret: a wrong one is refused without repeating it.
func TestConfigSensitiveAnswerNotRepeated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `
template "secret" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" {
    type = "number"
  }
}
`)
	_, errOut, code := h.ssh("alice", "launch", "secret", "--dry-run", "--var", "db_password=canary-7731")
	if code == 0 || strings.Contains(errOut, "canary-7731") || !strings.Contains(errOut, "sensitive") {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

// A run ID that is not the canonical decimal (leading zero, a sign, spaces,
// non-ASCII digits, huge) names no run, over SSH and over MCP, as a tool
// argument and as a resource URI.
func TestOnlyTheCanonicalRunIDNamesARun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	for _, id := range []string{"01", "+1", " 1", "1 ", "١", "１", "1e0", "0x1", "18446744073709551617"} {
		out, errOut, code := h.ssh("alice", "show", id, "--json")
		if code != api.ExitRefused || out != "" {
			t.Errorf("show %q: exit %d stdout %q", id, code, out)
		}
		if e := testkit.JSONRefusal(t, "show "+id, errOut); e.Error.Code != "not_found" {
			t.Errorf("show %q: %+v", id, e)
		}
	}
	c := h.mcpAs("helper-bot", "2025-11-25") // legacy subscribe: the client sees the server's answer
	for _, id := range []string{"01", "+1", " 1", "１"} {
		c.Refused("show_run", map[string]any{"run": id})
		c.Refused("cancel_run", map[string]any{"run": id})
	}
	for _, uri := range []string{"run://01", "run://+1", "run://1/../2", "run://1/log/", "run://1/log/../log", "run://１", "RUN://1", "run://1?x=1", "run://1#log", "run:///1"} {
		if _, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resource %q was read", uri)
		}
		if err := c.Session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err == nil {
			t.Errorf("resource %q was subscribed to", uri)
		}
	}
}
