package server

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/json")

// dynamicMaps are the JSON objects whose keys are data (variable names,
// actions), not part of the contract: their values' shape is pinned as
// PATH{}.
var dynamicMaps = map[string]bool{".vars": true, ".answers": true, ".proposal.addresses": true,
	".check.plan.addresses": true, "[].vars": true, "[].answers": true, "[].proposal.addresses": true}

// jsonShape lists every path of a JSON document with the type found
// there, one "path: type" per line, sorted; array elements are merged
// under PATH[] and dynamic maps' values under PATH{}.
func jsonShape(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	seen := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			seen[path+": object"] = true
			for k, e := range x {
				if dynamicMaps[path] {
					walk(path+"{}", e)
				} else {
					walk(path+"."+k, e)
				}
			}
		case []any:
			seen[path+": array"] = true
			for _, e := range x {
				walk(path+"[]", e)
			}
		case string:
			seen[path+": string"] = true
		case float64:
			seen[path+": number"] = true
		case bool:
			seen[path+": bool"] = true
		case nil:
			seen[path+": null"] = true
		}
	}
	walk("", v)
	lines := make([]string, 0, len(seen))
	for l := range seen {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// checkGolden compares a command's JSON shape with testdata/json/NAME.shape
// (rewritten with -update): a change to the contract shows as a diff.
// Paths in volatile are left out of both: a reply that races the run it
// just queued (launch, approve) may or may not show it started.
func checkGolden(t *testing.T, name, doc string, volatile ...string) {
	t.Helper()
	got := dropPaths(jsonShape(t, doc), volatile)
	path := filepath.Join("testdata", "json", name+".shape")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != dropPaths(string(want), volatile) {
		t.Errorf("the JSON shape of %s changed (update docs/json.md, then run with -update):\n--- want\n%s--- got\n%s", name, want, got)
	}
}

// dropPaths removes the shape lines of the given paths.
func dropPaths(shape string, paths []string) string {
	var kept []string
	for _, l := range strings.SplitAfter(shape, "\n") {
		drop := false
		for _, p := range paths {
			drop = drop || strings.HasPrefix(l, p+": ")
		}
		if !drop {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// jsonContractTemplates: a slow apply (to hold a run running and one
// queued behind it) and the data templates, every run of "data" held.
const jsonContractTemplates = networkTemplate + dataTemplates + approveAllData + `
template "slow" {
  project = "infra"
  command = "infra/slow"
}
`

// Each command's --json shape is pinned, and the contract's promises hold:
// [] on an empty server, no exit_code and no zero times on a queued run,
// the same run object from approve as from show, person/agent.
func TestJSONContractShapes(t *testing.T) {
	h := newHarness(t, jsonContractTemplates)
	if out := strings.TrimSpace(h.mustSSH("bob", "runs", "--json")); out != "[]" {
		t.Errorf("runs --json on an empty server = %q, want []", out)
	}
	if out := strings.TrimSpace(h.mustSSH("bob", "audit", "--json")); out != "[]" {
		t.Errorf("audit --json on an empty server = %q, want []", out)
	}
	checkGolden(t, "templates", h.mustSSH("bob", "templates", "--json"))
	checkGolden(t, "whoami", h.mustSSH("bob", "whoami", "--json"))
	checkGolden(t, "launch", h.mustSSH("alice", "launch", "slow", "--json"), ".started_at")
	waitLog(t, h, "1", "started-slow")
	checkGolden(t, "launch-queued", h.mustSSH("alice", "launch", "slow", "--json"))
	queued := h.showRaw("alice", "2")
	for _, k := range []string{"exit_code", "started_at", "finished_at", "proposal"} {
		if _, ok := queued[k]; ok {
			t.Errorf("show --json of a queued run has %s: %v", k, queued[k])
		}
	}
	if queued["requester_kind"] != "person" || queued["phase"] != "apply" {
		t.Errorf("a person's ungated apply: requester_kind %v, phase %v", queued["requester_kind"], queued["phase"])
	}
	checkGolden(t, "cancel-queued", h.mustSSH("alice", "cancel", "2", "--json"))
	checkGolden(t, "cancel-running", h.mustSSH("alice", "cancel", "1", "--json"))
	h.waitStatus("1", StatusCancelled)
	checkGolden(t, "show-cancelled", h.mustSSH("alice", "show", "1", "--json"))
	checkGolden(t, "runs", h.mustSSH("alice", "runs", "--json"))
	checkHeldContract(t, h)
}

// checkHeldContract pins show, approve and log of a held run, and that
// approve returns the very object show does (plan text included).
func checkHeldContract(t *testing.T, h *harness) {
	t.Helper()
	h.ssh("deploy-bot", "launch", "data", "--var", "instances=1", "--wait")
	h.waitStatus("3", StatusAwaitingApproval)
	show := h.mustSSH("bob", "show", "3", "--json")
	checkGolden(t, "show-held-request", show)
	held := h.showRaw("bob", "3")
	if held["requester_kind"] != "agent" {
		t.Errorf("an agent's run: requester_kind %v", held["requester_kind"])
	}
	digest := held["proposal"].(map[string]any)["digest"].(string)
	checkGolden(t, "approve-request", h.mustSSH("bob", "approve", "3", "--digest", digest, "--json"), ".started_at")
	h.waitStatus("3", StatusAwaitingApproval, StatusFailed)
	show = h.mustSSH("bob", "show", "3", "--json")
	checkGolden(t, "show-held-plan", show)
	var shown, approved struct{ Proposal map[string]any }
	if err := json.Unmarshal([]byte(show), &shown); err != nil || shown.Proposal["stage"] != "plan" {
		t.Fatalf("show 3 --json: %v, proposal %v", err, shown.Proposal)
	}
	out := h.mustSSH("bob", "approve", "3", "--digest", shown.Proposal["digest"].(string), "--json")
	checkGolden(t, "approve", out)
	if err := json.Unmarshal([]byte(out), &approved); err != nil {
		t.Fatal(err)
	}
	if p := approved.Proposal["plan_text"]; p == "" || p != shown.Proposal["plan_text"] {
		t.Errorf("approve --json's plan_text %q differs from show --json's", p)
	}
	h.waitStatus("3", StatusSucceeded)
	log := h.mustSSH("bob", "log", "3", "--json")
	checkGolden(t, "log", "["+strings.Join(strings.Split(strings.TrimSpace(log), "\n"), ",")+"]")
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var l struct {
			Offset *int64
			Text   *string
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Offset == nil || l.Text == nil {
			t.Errorf("log --json line %q: %v", line, err)
		}
	}
}

// waitLog waits until run id's log contains want.
func waitLog(t *testing.T, h *harness, id, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(h.mustSSH("alice", "log", id), want) {
		if time.Now().After(deadline) {
			t.Fatalf("run %s's log never said %q", id, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// With --json every refusal is {"error": {"code", "message"}} on stderr,
// with the exit status of the text form, and nothing on stdout.
func TestJSONErrors(t *testing.T) {
	h := newHarness(t, jsonContractTemplates)
	cases := []struct {
		user  string
		words []string
		code  string
		exit  int
	}{
		{"bob", []string{"show", "999", "--json"}, ErrNotFound, exitRefused},
		{"bob", []string{"approve", "999", "--digest", "sha256:" + strings.Repeat("0", 64), "--json"}, ErrNotFound, exitRefused},
		{"bob", []string{"approve", "1", "--json"}, errCodeUsage, exitUsage},
		{"bob", []string{"show", "1", "--bogus", "--json"}, errCodeUsage, exitUsage},
		{"bob", []string{"--json", "show"}, "", exitUsage}, // the command word must come first: not JSON
		{"carol", []string{"audit", "--json"}, ErrForbidden, exitRefused},
		{"bob", []string{"launch", "network", "--json"}, ErrForbidden, exitRefused},
		{"alice", []string{"launch", "network", "--var", "region=", "--json"}, ErrInvalid, exitRefused},
		{"alice", []string{"launch", "nosuch", "--json"}, ErrNotFound, exitRefused},
	}
	for _, c := range cases {
		out, errOut, code := h.ssh(c.user, c.words...)
		_, textErr, textCode := h.ssh(c.user, without(c.words, "--json")...)
		if code != c.exit || textCode != code {
			t.Errorf("%v: exit %d (text form %d), want %d", c.words, code, textCode, c.exit)
		}
		if out != "" {
			t.Errorf("%v printed on stdout: %q", c.words, out)
		}
		if c.code == "" {
			continue
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(errOut), &e); err != nil || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%v: stderr %q (%v), want a JSON error with code %s", c.words, errOut, err, c.code)
		}
		if !strings.Contains(textErr, e.Error.Message) {
			t.Errorf("%v: the JSON message %q differs from the text one %q", c.words, e.Error.Message, textErr)
		}
	}
}

// without returns words without w.
func without(words []string, w string) []string {
	var out []string
	for _, x := range words {
		if x != w {
			out = append(out, x)
		}
	}
	return out
}

// A run stored before the contract says requester_kind "user": it is shown
// as "person", in text and JSON alike.
func TestStoredUserKindReadsAsPerson(t *testing.T) {
	v := runView{}
	v.ID, v.Status, v.RequesterKind, v.ExitCode = "1", string(StatusQueued), "user", -1
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["requester_kind"] != "person" {
		t.Errorf("requester_kind = %v, want person", m["requester_kind"])
	}
	for _, k := range []string{"exit_code", "started_at", "finished_at"} {
		if _, ok := m[k]; ok {
			t.Errorf("a queued run's JSON has %s", k)
		}
	}
	for _, k := range []string{"vars", "secret_vars", "approvals", "steps", "holds"} {
		if m[k] == nil {
			t.Errorf("%s is null, want empty", k)
		}
	}
	if got := fmt.Sprintln(requesterKind("agent"), requesterKind("user"), requesterKind("")); got != "agent person person\n" {
		t.Errorf("requesterKind: %s", got)
	}
}
