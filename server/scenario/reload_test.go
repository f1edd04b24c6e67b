package scenario

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// A user added by a reload connects without a restart; a rule removed by
// it leaves the held run's holds as they were decided (audited), and the
// run can still be approved; a server block change is logged, not applied.
func TestReloadUsersAndHeldHolds(t *testing.T) {
	t.Parallel()
	h, logs := newLoggedHarness(t, "", dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", store.StatusAwaitingApproval)
	key := h.newKey("erin")
	if _, err := dialAs(h, "erin"); err == nil {
		t.Fatal("erin got in before she was configured")
	}
	// Drop the rule (rewrite the file without it), add erin, change max_parallel.
	b, _ := os.ReadFile(h.cfgPath)
	src := strings.Replace(string(b), approveAllData, "", 1)
	src = strings.Replace(src, "cancel_grace = \"5s\"\n", "cancel_grace = \"5s\"\n  max_parallel = 7\n", 1)
	os.WriteFile(h.cfgPath, []byte(src), 0o600)
	h.reloadWith(fmt.Sprintf("user \"erin\" {\n  public_key = %q\n  roles = [\"launch\", \"approve\"]\n}\n", key))

	if out := h.mustSSH("erin", "templates"); !strings.Contains(out, "data") {
		t.Errorf("erin's templates: %s", out)
	}
	v := h.show("bob", "1")
	if v.Status != store.StatusAwaitingApproval || len(v.Proposal.Holds) != 1 || v.Proposal.Holds[0].Rule != "everything" {
		t.Fatalf("after the reload run 1 is %s with holds %+v", v.Status, v.Proposal.Holds)
	}
	if out := h.mustSSH("bob", "audit", "--run", "1"); !strings.Contains(out, "keeps the holds it was decided with (pending: everything)") {
		t.Errorf("the audit trail does not say run 1 kept its holds:\n%s", out)
	}
	h.mustSSH("erin", "approve", "1", "--digest", v.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
	if !strings.Contains(logs.String(), `"msg":"reload: the server block changed; those settings take effect at the next restart","settings":["MaxParallel"]`) {
		t.Errorf("the server block change was not logged:\n%s", logs.String())
	}
	if h.srv.Config().Server.MaxParallel == 7 {
		t.Error("max_parallel changed without a restart")
	}
	// A new run of data is no longer held: the rule is gone for what plans next.
	h.mustSSH("erin", "launch", "data", "--var", "instances=2", "--wait")
}

// Reloads racing launches (run with -race): every launch is accepted or
// refused whole, every run ends, and nothing panics.
func TestReloadRacingLaunches(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	cfgs := make([]*config.Config, 2)
	for i := range cfgs {
		var err error
		if cfgs[i], err = config.Load(h.cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	delete(cfgs[1].Templates, "data") // every other reload removes the template launched
	var wg sync.WaitGroup
	ids := make(chan string, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				r, err := h.srv.Launch(context.Background(), h.identity("alice"), server.LaunchRequest{Template: "data", Kind: store.KindPlan,
					Answers: map[string]string{"generation": fmt.Sprint(w*10 + i)}})
				if err == nil {
					ids <- r.ID
				} else if server.ErrorCode(err) != api.ErrNotFound {
					t.Errorf("launch: %v", err)
				}
			}
		}()
	}
	for i := range 40 {
		h.srv.Reload(cfgs[i%2])
	}
	wg.Wait()
	close(ids)
	h.srv.Reload(cfgs[0])
	for id := range ids {
		h.waitStatus(id, store.StatusSucceeded, store.StatusFailed)
	}
}

// Promise (brief): "a user removed on reload can no longer act (open SSH
// sessions? an open console? an MCP session?)". Once, a user removed from the
// configuration by a reload still approved a held apply from the console he
// had left open, because the console acted on the identity captured at
// session start.
func TestARemovedUserCannotApproveFromAnOpenConsole(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", store.StatusAwaitingApproval)
	digest := h.show("alice", "1").Proposal.Digest

	// bob opens a console before the reload (what serveTUI builds).
	con := sshd.NewConsole(h.srv, h.identity("bob"))
	if !con.Identity().CanApprove {
		t.Fatal("bob's console cannot approve even before the reload")
	}

	h.dropUser("bob")
	if _, err := dialAs(h, "bob"); err == nil {
		t.Error("bob's key still connects after he was removed") // held if this does not fire
	}

	err := con.Approve(context.Background(), "1", digest)
	if err == nil {
		r, _ := h.db().GetRun("1")
		t.Errorf("BREAK: bob, removed from the configuration by a reload, approved run 1 from his open console (run is now %s: %q)", r.Status, r.Message)
	}
}

// A reload that takes away an approver's role takes it from the console
// they have open too.
// Once, an approver whose approve role a reload took away kept approving from
// a console opened before it.
func TestARevokedApproverCannotApproveFromAnOpenConsole(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", store.StatusAwaitingApproval)
	digest := h.show("alice", "1").Proposal.Digest
	con := sshd.NewConsole(h.srv, h.identity("bob"))

	b, _ := os.ReadFile(h.cfgPath)
	re := regexp.MustCompile(`(?s)(user "bob" \{.*?roles = )\["approve"\]`)
	os.WriteFile(h.cfgPath, []byte(re.ReplaceAllString(string(b), `${1}[]`)), 0o600)
	h.reloadWith("")
	if u := h.srv.Config().Users["bob"]; u == nil || len(u.Roles) != 0 {
		t.Fatalf("bob after the reload: %+v", u)
	}
	// A fresh session is refused (held):
	if _, errOut, code := h.ssh("bob", "approve", "1", "--digest", digest); code == 0 {
		t.Fatalf("a fresh session of bob approved after his role was removed: %s", errOut)
	}
	if err := con.Approve(context.Background(), "1", digest); err == nil {
		t.Error("BREAK: bob's approve role was removed by a reload, yet his console opened before it approved run 1")
	}
}

// A key moved on reload from carol (launch only) to a new user erin
// (approve): a fresh session with that key is erin's, not carol's.
func TestAKeyMovedOnReloadIsTheNewUsers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	b, _ := os.ReadFile(h.cfgPath)
	re := regexp.MustCompile(`(?s)user "carol" \{\n  public_key = ("[^"]*")\n.*?\n\}\n`)
	m := re.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("no carol block")
	}
	src := re.ReplaceAllString(string(b), "") + "user \"erin\" {\n  public_key = " + m[1] + "\n  roles = [\"approve\"]\n}\n"
	os.WriteFile(h.cfgPath, []byte(src), 0o600)
	h.reloadWith("")
	out := h.mustSSH("carol", "whoami") // carol's key, now erin's
	if !strings.Contains(out, "erin") || strings.Contains(out, "carol") {
		t.Errorf("the moved key's session: %s", out)
	}
}

// dropUser rewrites the harness's configuration file without user name's
// block and reloads the server with it.
func (h *harness) dropUser(name string) {
	h.t.Helper()
	b, err := os.ReadFile(h.cfgPath)
	if err != nil {
		h.t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)user "` + name + `" \{.*?\n\}\n`)
	src := re.ReplaceAllString(string(b), "")
	if src == string(b) {
		h.t.Fatalf("no user %q block in the configuration", name)
	}
	if err := os.WriteFile(h.cfgPath, []byte(src), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.reloadWith("")
	if h.srv.Config().Users[name] != nil {
		h.t.Fatalf("user %s still configured after the reload", name)
	}
}
