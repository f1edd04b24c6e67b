package scenario

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
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
	path := filepath.Join(testdata, "json", name+".shape")
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
	t.Parallel()
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
	for _, k := range []string{"exit_code", "started_at", "finished_at", "proposal", "changes"} {
		if _, ok := queued[k]; ok {
			t.Errorf("show --json of a queued run has %s: %v", k, queued[k])
		}
	}
	if queued["requester_kind"] != "person" || queued["phase"] != "apply" {
		t.Errorf("a person's ungated apply: requester_kind %v, phase %v", queued["requester_kind"], queued["phase"])
	}
	checkGolden(t, "cancel-queued", h.mustSSH("alice", "cancel", "2", "--json"))
	checkGolden(t, "cancel-running", h.mustSSH("alice", "cancel", "1", "--json"))
	h.waitStatus("1", store.StatusCancelled)
	checkGolden(t, "show-cancelled", h.mustSSH("alice", "show", "1", "--json"))
	checkGolden(t, "runs", h.mustSSH("alice", "runs", "--json"))
	checkHeldContract(t, h)
}

// checkHeldContract pins show, approve and log of a held run, and that
// approve returns the very object show does (plan text included).
func checkHeldContract(t *testing.T, h *harness) {
	t.Helper()
	h.ssh("deploy-bot", "launch", "data", "--var", "instances=1", "--wait")
	h.waitStatus("3", store.StatusAwaitingApproval)
	show := h.mustSSH("bob", "show", "3", "--json")
	checkGolden(t, "show-held-request", show)
	held := h.showRaw("bob", "3")
	if held["requester_kind"] != "agent" {
		t.Errorf("an agent's run: requester_kind %v", held["requester_kind"])
	}
	if _, ok := held["changes"]; ok {
		t.Errorf("a run held before planning has a change set: %v", held["changes"])
	}
	digest := held["proposal"].(map[string]any)["digest"].(string)
	checkGolden(t, "approve-request", h.mustSSH("bob", "approve", "3", "--digest", digest, "--json"), ".started_at")
	h.waitStatus("3", store.StatusAwaitingApproval, store.StatusFailed)
	show = h.mustSSH("bob", "show", "3", "--json")
	checkGolden(t, "show-held-plan", show)
	checkChangesContract(t, h, "3", show)
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
	h.waitStatus("3", store.StatusSucceeded)
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

// checkChangesContract pins `show ID --changes --json` of held run id: the
// very object show --json (its JSON show) carries as "changes", with its
// lists [] and never null; runs --json carries none.
func checkChangesContract(t *testing.T, h *harness, id, show string) {
	t.Helper()
	alone := h.mustSSH("bob", "show", id, "--changes", "--json")
	checkGolden(t, "show-changes", alone)
	var run struct{ Changes json.RawMessage }
	if err := json.Unmarshal([]byte(show), &run); err != nil || len(run.Changes) == 0 {
		t.Fatalf("show %s --json has no changes (%v)", id, err)
	}
	var a, b any
	if err := json.Unmarshal([]byte(alone), &a); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(run.Changes, &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("show %s --changes --json differs from show --json's changes:\n%s\n%s", id, alone, run.Changes)
	}
	if strings.Contains(jsonShape(t, alone), ": null") {
		t.Errorf("the change set's JSON holds a null:\n%s", alone)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(h.mustSSH("bob", "runs", "--json")), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if _, ok := r["changes"]; ok {
			t.Errorf("runs --json carries run %v's change set", r["id"])
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
	t.Parallel()
	h := newHarness(t, jsonContractTemplates)
	cases := []struct {
		user  string
		words []string
		code  string
		exit  int
	}{
		{"bob", []string{"show", "999", "--json"}, api.ErrNotFound, api.ExitRefused},
		{"bob", []string{"approve", "999", "--digest", "sha256:" + strings.Repeat("0", 64), "--json"}, api.ErrNotFound, api.ExitRefused},
		{"bob", []string{"approve", "1", "--json"}, sshd.ErrCodeUsage, api.ExitUsage},
		{"bob", []string{"show", "1", "--bogus", "--json"}, sshd.ErrCodeUsage, api.ExitUsage},
		{"bob", []string{"--json", "show"}, "", api.ExitUsage}, // the command word must come first: not JSON
		{"carol", []string{"audit", "--json"}, api.ErrForbidden, api.ExitRefused},
		{"bob", []string{"launch", "network", "--json"}, api.ErrForbidden, api.ExitRefused},
		{"alice", []string{"launch", "network", "--var", "region=", "--json"}, api.ErrInvalid, api.ExitRefused},
		{"alice", []string{"launch", "nosuch", "--json"}, api.ErrNotFound, api.ExitRefused},
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
	t.Parallel()
	v := api.RunView{}
	v.ID, v.Status, v.RequesterKind, v.ExitCode = "1", store.StatusQueued, "user", -1
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
	if got := fmt.Sprintln(api.RequesterKind("agent"), api.RequesterKind("user"), api.RequesterKind("")); got != "agent person person\n" {
		t.Errorf("requesterKind: %s", got)
	}
}

// Promise (docs/json.md): with --json a refusal goes to stderr as one JSON
// object, malformed words included (code "usage", exit 2). Once, `show
// --json=1` got its usage refusal in text, because the check made before
// parsing knew only some of the spellings the flag package takes for true.
func TestEverySpellingOfJSONTrueGetsAJSONRefusal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	for _, spelling := range []string{"--json=1", "--json=t", "--json=True", "-json=TRUE"} {
		// after parsing: JSON (the flag really is true)
		_, errOut, code := h.ssh("alice", "show", "999", spelling)
		if code != api.ExitRefused {
			t.Errorf("show 999 %s: exit %d", spelling, code)
		}
		testkit.JSONRefusal(t, "show 999 "+spelling, errOut)
		// malformed words: the same flag, but the refusal is text
		_, errOut, code = h.ssh("alice", "show", spelling)
		if code != api.ExitUsage {
			t.Errorf("show %s: exit %d", spelling, code)
		}
		testkit.JSONRefusal(t, "show "+spelling+" (no RUN)", errOut)
	}
}

// --json given twice, or as --json --json=false, is malformed words refused
// as JSON with exit 2 and nothing on stdout.
func TestJSONGivenTwiceIsRefusedAsJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	for _, args := range [][]string{{"show", "1", "--json", "--json"}, {"runs", "--json", "--json=false"}, {"whoami", "-json", "--json"}} {
		out, errOut, code := h.ssh("alice", args...)
		if code != api.ExitUsage || out != "" {
			t.Errorf("%v: exit %d stdout %q", args, code, out)
		}
		if e := testkit.JSONRefusal(t, strings.Join(args, " "), errOut); e.Error.Code != sshd.ErrCodeUsage {
			t.Errorf("%v: code %q", args, e.Error.Code)
		}
	}
}

// Exit statuses of log --follow (0 succeeded, 3 held, 1 otherwise) with
// --json, and its last line; cancel --json of a held run prints the run
// object only (no sentence on stdout).
func TestLogFollowExitCodesWithJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	out, _, code := h.ssh("carol", "log", "1", "--follow", "--json")
	if code != api.ExitOK || !strings.Contains(out, `"status":"succeeded"`) {
		t.Errorf("log --follow --json of a succeeded run: exit %d\n%s", code, out)
	}
	h.mustSSH("deploy-bot", "launch", "data") // held before planning
	out, _, code = h.ssh("carol", "log", "2", "--follow", "--json")
	if code != sshd.ExitHeld || !strings.Contains(out, `"status":"awaiting_approval"`) {
		t.Errorf("log --follow --json of a held run: exit %d\n%s", code, out)
	}
	out, errOut, code := h.ssh("deploy-bot", "cancel", "2", "--json")
	var v map[string]any
	if code != api.ExitOK || json.Unmarshal([]byte(out), &v) != nil || v["status"] != "cancelled" {
		t.Errorf("cancel --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, ok := v["exit_code"]; ok {
		t.Errorf("a run cancelled before anything ran has an exit_code: %v", v["exit_code"])
	}
	out, _, code = h.ssh("carol", "log", "2", "--follow", "--json")
	if code != api.ExitRefused || !strings.Contains(out, `"status":"cancelled"`) {
		t.Errorf("log --follow --json of a cancelled run: exit %d\n%s", code, out)
	}
}

// Promise (docs/json.md, the run object): a hold's "waits_for" is present
// "while it holds"; "waiting" only "while held"; times not yet known are left
// out. Once, show --json of a cancelled run still named whom its holds waited
// for.
func TestJSONOfAnEndedRunWaitsForNobody(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("deploy-bot", "launch", "data") // held before planning
	h.mustSSH("deploy-bot", "cancel", "1")
	out := h.mustSSH("alice", "show", "1", "--json")
	if strings.Contains(out, "0001-01-01") {
		t.Errorf("show --json carries a zero time:\n%s", out)
	}
	var v struct {
		Status  string           `json:"status"`
		Waiting *string          `json:"waiting"`
		Holds   []map[string]any `json:"holds"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Status != "cancelled" || len(v.Holds) == 0 {
		t.Fatalf("show 1 --json: %v\n%s", err, out)
	}
	if v.Waiting != nil {
		t.Errorf("a cancelled run has \"waiting\": %q", *v.Waiting)
	}
	for _, hold := range v.Holds {
		if wf, ok := hold["waits_for"]; ok {
			t.Errorf("a hold of a cancelled run still waits for %q (rule %v)", wf, hold["rule"])
		}
	}
	if text := h.mustSSH("alice", "show", "1"); strings.Contains(text, "waits for") {
		t.Logf("(the text says waits for too:\n%s)", text)
	}
}

// Promise (docs/json.md): launch, reject and rerun with --json print the
// object show --json prints right after, field for field; whoami --json has
// its four fields, roles [] for an agent; runs --json is [] on an empty
// filter result.
func TestJSONCommandsPrintTheShowObject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	if out := h.mustSSH("alice", "runs", "--json", "--status", "failed"); strings.TrimSpace(out) != "[]" {
		t.Errorf("runs --json with nothing matching: %q", out)
	}
	var who map[string]any
	json.Unmarshal([]byte(h.mustSSH("deploy-bot", "whoami", "--json")), &who)
	if roles, ok := who["roles"].([]any); !ok || len(roles) != 0 || who["kind"] != "agent" || len(who) != 4 {
		t.Errorf("whoami --json of an agent: %v", who)
	}
	same := func(what, got, id string) {
		t.Helper()
		var a, b map[string]any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, got)
		}
		json.Unmarshal([]byte(h.mustSSH("alice", "show", id, "--json")), &b)
		delete(a, "waiting_for_you")
		delete(b, "waiting_for_you")
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s --json differs from show --json:\n%v\n%v", what, a, b)
		}
	}
	same("launch", h.mustSSH("deploy-bot", "launch", "data", "--json"), "1")
	same("reject", h.mustSSH("alice", "reject", "1", "--reason", "no", "--json"), "1")
	same("rerun", h.mustSSH("deploy-bot", "rerun", "1", "--json"), "2")
}

// Promise (convention the flag package and POSIX share, which parse follows
// for `--` itself: `show -- --json` takes --json as the RUN): `--` ends the
// flags, every word after it is an argument. Once, a flag after `--` and one
// argument was parsed as a flag again, so `show -- 1 --json` printed JSON.
func TestDoubleDashEndsTheFlags(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run")
	_, _, code := h.ssh("alice", "show", "--", "--json", "1")
	if code != api.ExitUsage {
		t.Errorf("show -- --json 1: exit %d, want 2 (two arguments)", code)
	}
	out, _, code := h.ssh("alice", "show", "--", "1", "--json")
	if code != api.ExitUsage || strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("show -- 1 --json: exit %d, --json after -- was taken as a flag:\n%.200s", code, out)
	}
}

// Promise (docs/json.md): a refusal is JSON when --json was asked for, and
// text otherwise. Once, --json given as a flag's value, as in `reject
// --reason --json`, turned a text command's usage refusal into JSON.
func TestJSONAsAFlagValueKeepsTheRefusalText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	_, errOut, code := h.ssh("alice", "runs", "--template", "--json")
	if code != api.ExitRefused || strings.HasPrefix(errOut, "{") {
		t.Errorf("runs --template --json (a template named --json): exit %d %q", code, errOut)
	}
	_, errOut, code = h.ssh("alice", "reject", "--reason", "--json")
	if code != api.ExitUsage || strings.HasPrefix(errOut, "{") {
		t.Errorf("reject --reason --json (no RUN; no JSON asked): exit %d, refusal in JSON: %q", code, errOut)
	}
}

// Promise (docs/json.md): lists are [] and maps {}, never null, in every
// command's JSON on a fresh server and for a template with no survey; an
// agent's run held before planning has no null anywhere either.
func TestJSONHasNoNulls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
template "bare" {
  project = "infra"
  command = "infra/data"
}
`)
	for _, args := range [][]string{{"runs", "--json"}, {"templates", "--json"}, {"audit", "--json"}, {"whoami", "--json"}} {
		if out := h.mustSSH("bob", args...); strings.Contains(out, "null") {
			t.Errorf("%v: null in\n%s", args, out)
		}
	}
	h.mustSSH("deploy-bot", "launch", "bare")
	for _, args := range [][]string{{"runs", "--json"}, {"show", "1", "--json"}, {"audit", "--json", "--run", "1"}} {
		if out := h.mustSSH("bob", args...); strings.Contains(out, "null") {
			t.Errorf("%v: null in\n%s", args, out)
		}
	}
	c := h.mcpAs("deploy-bot")
	res := c.Call("show_run", map[string]any{"run": "1"})
	if b, _ := json.Marshal(res.StructuredContent); strings.Contains(string(b), "null") {
		t.Errorf("show_run: null in %s", b)
	}
}

// Promise (docs/json.md): requester_kind is "person" or "agent", the
// words the text uses; the store's "user" never shows.
func TestJSONRequesterKindIsPersonOrAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	h.mustSSH("carol", "launch", "data", "--dry-run", "--wait")
	h.mustSSH("deploy-bot", "launch", "data")
	for _, id := range []string{"1", "2"} {
		out := h.mustSSH("alice", "show", id, "--json")
		if strings.Contains(out, `"user"`) {
			t.Errorf("show %s --json says \"user\":\n%s", id, out)
		}
	}
	c := h.mcpAs("helper-bot")
	for _, uri := range []string{"run://1", "run://2"} {
		res, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || strings.Contains(res.Contents[0].Text, `"user"`) {
			t.Errorf("%s: %v says \"user\"", uri, err)
		}
	}
}

// A dry run's show --json is pinned too: its saved plan as "plan", its
// change set as "changes", and no "proposal".
func TestJSONContractShapeOfADryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	v := h.launchWait("carol", "data", "--dry-run")
	if v.Run.Status != store.StatusSucceeded {
		t.Fatalf("the dry run %s: %s", v.Status, v.Message)
	}
	checkGolden(t, "show-dry-run", h.mustSSH("bob", "show", v.ID, "--json"))
}
