package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Attack on issue 14 (operator view: log, metrics, notifications, reload,
// check). Tests that fail are breaks; the others record what held.

// dropUser rewrites the harness's configuration file without user name's
// block and reloads the server with it.
func (h *harness) attack14DropUser(name string) {
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
	if h.srv.config().Users[name] != nil {
		h.t.Fatalf("user %s still configured after the reload", name)
	}
}

// BREAK. Promise (issue 14 item 4, brief): "a user removed on reload can no
// longer act (open SSH sessions? an open console? an MCP session?)".
// What happens: the console (and an MCP session, and any `--wait` command)
// captures the Identity, roles included, once at session start
// (server/ssh.go routeMiddleware: `id, ok := s.identify(...)` then
// `s.serveTUI(sess, id)` -> console.go `newConsole(s, id)`), and
// Approve/Reject/Cancel/Launch trust that copy (permissions.go mayApprove:
// `who.Has("approve")` reads the captured roles; nothing asks the current
// configuration whether who still exists). So bob, removed from the
// configuration by a reload (a fired approver, a revoked key), still
// approves a held apply from the console he left open — and it applies.
// The README's "sessions already open keep going" does not make acting in
// them with powers the operator just took away acceptable.
func TestAttack14RemovedUserOpenConsoleStillApproves(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	digest := h.show("alice", "1").Proposal.Digest

	// bob opens a console before the reload (what serveTUI builds).
	con := newConsole(h.srv, h.identity("bob"))
	if !con.Identity().CanApprove {
		t.Fatal("bob's console cannot approve even before the reload")
	}

	h.attack14DropUser("bob")
	if _, err := dialAs(h, "bob"); err == nil {
		t.Error("bob's key still connects after he was removed") // held if this does not fire
	}

	err := con.Approve(context.Background(), "1", digest)
	if err == nil {
		r, _ := h.srv.db.GetRun("1")
		t.Errorf("BREAK: bob, removed from the configuration by a reload, approved run 1 from his open console (run is now %s: %q)", r.Status, r.Message)
	}
}

// BREAK (same root cause, roles): an approver whose approve role a reload
// took away keeps approving from a console opened before it.
func TestAttack14RoleRevokedOpenConsoleStillApproves(t *testing.T) {
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	digest := h.show("alice", "1").Proposal.Digest
	con := newConsole(h.srv, h.identity("bob"))

	b, _ := os.ReadFile(h.cfgPath)
	re := regexp.MustCompile(`(?s)(user "bob" \{.*?roles = )\["approve"\]`)
	os.WriteFile(h.cfgPath, []byte(re.ReplaceAllString(string(b), `${1}[]`)), 0o600)
	h.reloadWith("")
	if u := h.srv.config().Users["bob"]; u == nil || len(u.Roles) != 0 {
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

// BREAK. Promise (README "Notifications", brief): a delivery is "never
// delivered twice to a receiver that answered 2xx".
// What happens: the receiver answers 200 (status line and headers sent)
// and the server shuts down while the answer's body is being read
// (notify.go send: io.Copy's error is ignored, so send returns nil).
// attempt then checks `if ctx.Err() != nil { return }` BEFORE looking at
// err (server/notify.go, attempt: "stopping: the delivery stays stored for
// the next start") — a delivery that succeeded is kept and POSTed again
// after the restart, with the same X-Switchtender-Delivery ID.
func TestAttack14NotifyDeliveredTwiceAfter2xx(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	answered := make(chan struct{}, 4)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("X-Switchtender-Delivery"))
		first := len(ids) == 1
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
		if !first {
			return
		}
		w.Write([]byte("ok, "))
		w.(http.Flusher).Flush() // the 2xx has reached the sender
		answered <- struct{}{}
		<-r.Context().Done() // the rest of the body never comes
	}))
	defer ts.Close()
	h := writeHarness(t, "", dataTemplates+approveAllData+notifyBlock("hook", ts.URL+"/hook", "json", `["awaiting_approval"]`))
	h.tune = func(o *Options) { o.NotifyBackoff, o.NotifyTimeout = 50*time.Millisecond, time.Minute }
	h.start()
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	select {
	case <-answered:
	case <-time.After(60 * time.Second):
		t.Fatal("no delivery reached the receiver")
	}
	// The sender has the 2xx once its headers arrive; a stop racing the
	// answer itself leaves the delivery stored, and delivery is at least
	// once (receivers dedupe by X-Switchtender-Delivery, as documented).
	time.Sleep(200 * time.Millisecond)
	h.restart() // the operator restarts (or a deploy does) while the body is read
	time.Sleep(2 * time.Second)
	mu.Lock()
	got := append([]string(nil), ids...)
	mu.Unlock()
	if len(got) > 1 {
		t.Errorf("BREAK: the receiver answered 200 to delivery %s, and got it again after the restart: deliveries %v", got[0], got)
	}
}

// HELD. A receiver cannot make the server follow a redirect: a 302 to
// another receiver is a failed attempt (retried), and the target never
// hears of it.
func TestAttack14NotifyRedirectNotFollowed(t *testing.T) {
	target := &receiver{}
	tts := httptest.NewServer(target)
	defer tts.Close()
	var hits int
	var mu sync.Mutex
	rts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		http.Redirect(w, r, tts.URL+"/stolen", http.StatusTemporaryRedirect)
	}))
	defer rts.Close()
	h := writeHarness(t, "", dataTemplates+approveAllData+notifyBlock("hook", rts.URL, "json", `["awaiting_approval"]`))
	h.tune = fastNotify
	h.start()
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := hits
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redirecting receiver got %d attempts, want a retry", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect was followed: the target got %d requests", n)
	}
}

// HELD. A notify URL with credentials and a token
// (http://user:pass@host/path?token=...) that cannot be reached: the
// operator log's retry records carry neither the userinfo nor the token.
func TestAttack14NotifyURLCredentialsNotLogged(t *testing.T) {
	const user, pass, tok = "hookuser-c4n4ry", "hookpass-c4n4ry-91", "tok-c4n4ry-77"
	addr := freeAddr(t)
	u := fmt.Sprintf("http://%s:%s@%s/p/%s?token=%s", user, pass, addr, tok, tok)
	logs := &logBuffer{}
	h := writeHarness(t, "", dataTemplates+approveAllData+notifyBlock("hook", u, "json", `["awaiting_approval"]`))
	h.logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.tune = fastNotify
	h.start()
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	logs.waitFor(t, "notification not delivered; will retry")
	h.reloadWith("\n") // the reload logs problems: still nothing
	for _, c := range []string{user, pass, tok, notifySecret} {
		if strings.Contains(logs.String(), c) {
			t.Errorf("%q in the operator log:\n%s", c, logs.String())
		}
	}
	ds, _ := h.srv.db.Deliveries()
	for _, d := range ds {
		if strings.Contains(d.LastError, pass) || strings.Contains(d.LastError, tok) {
			t.Errorf("stored delivery error holds the URL: %q", d.LastError)
		}
	}
}

// HELD. Labels come from the configuration only: a launch of a template
// name the client made up, an SSH user name and a run id never become a
// label value on /metrics.
func TestAttack14MetricsNoClientLabels(t *testing.T) {
	h := newHarnessWith(t, metricsListen, dataTemplates)
	const made = "zz-client-made-template-31337"
	h.ssh("alice", "launch", made)
	h.ssh("carol", "launch", "data", "--kind", made)
	h.mustSSH("alice", "launch", "data", "--var", "generation=client-gen-31337", "--wait")
	_, body := h.scrape("/metrics")
	for _, bad := range []string{made, "client-gen-31337", `run="`, `user="`, `identity="`} {
		if strings.Contains(body, bad) {
			t.Errorf("/metrics holds %q from a client", bad)
		}
	}
}

// HELD. /healthz and /readyz on a listener that is up answer 200; after
// Close /readyz does not claim readiness (the listener is gone).
func TestAttack14ReadyzAfterClose(t *testing.T) {
	h := newHarnessWith(t, metricsListen, dataTemplates)
	if code, _ := h.scrape("/readyz"); code != 200 {
		t.Fatalf("/readyz %d", code)
	}
	if err := h.srv.ready(); err != nil {
		t.Fatal(err)
	}
	h.srv.Close()
	if err := h.srv.ready(); err == nil {
		t.Error("ready() says ready after Close")
	}
	h.srv = nil
}

// BREAK. Promise (issue 14 item 1; brief: "a secret inside a reject
// reason"): nothing secret in any operator log record ("the masker's rules
// apply"). What happens: the approver's reject reason quotes the run's own
// sensitive survey answer; the operator log's "rejection" record
// (server/reject.go: `"reason", s.scrub(reason)`) and the "run rejected"
// record (server/oplog.go noteRun: `"message", s.scrub(r.Message)`) pass it
// through s.scrub, whose masker holds only the configuration's credential
// values and notify URL/secret (oplog.go newScrubber) — never the run's
// sensitive answers, which the run's own masker knows. The secret lands in
// the operator log in clear.
func TestAttack14RejectReasonSecretInOperatorLog(t *testing.T) {
	h, logs := newLoggedHarness(t, "", heldSecretTemplate)
	h.sshStdin("alice", toJSON(map[string]string{"db_password": canaryDB}), "launch", "held-secret", "--answers", "-")
	h.waitStatus("1", StatusAwaitingApproval)
	reason := "no: the db password " + canaryDB + " is the old one; also " + canaryCloud
	if _, errOut, code := h.ssh("bob", "reject", "1", "--reason", reason); code != 0 {
		t.Fatalf("reject: %d %s", code, errOut)
	}
	h.waitStatus("1", StatusRejected)
	logs.waitFor(t, `"msg":"rejection"`)
	if strings.Contains(logs.String(), canaryCloud) {
		t.Errorf("the credential value in a reject reason reached the operator log")
	}
	if found := leaks("operator log", []byte(logs.String()), []string{canaryDB}); len(found) > 0 {
		t.Errorf("BREAK: the run's sensitive answer, quoted in a reject reason, is in the operator log: %v", found)
	}
}

// Promise: a run's events reach its receivers and "deliveries survive a
// restart". Probe: a run executing when the server stops ends interrupted
// (a "failed" event); is that event delivered after the next start?
func TestAttack14NotifyInterruptedAtShutdownDelivered(t *testing.T) {
	rc := &receiver{}
	ts := httptest.NewServer(rc)
	defer ts.Close()
	h := writeHarness(t, "", `
template "slow" {
  project = "infra"
  command = "infra/slow"
}
`+notifyBlock("hook", ts.URL+"/hook", "json", `["failed"]`))
	h.tune = fastNotify
	h.start()
	h.mustSSH("alice", "launch", "slow")
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _, _ := h.ssh("alice", "log", "1")
		if strings.Contains(out, "started-slow") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow apply never started:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.restart()
	r, _ := h.srv.db.GetRun("1")
	if !statusOf(r).Final() {
		t.Fatalf("run 1 after the restart: %s", r.Status)
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(rc.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(rc.requests()) == 0 {
		ds, _ := h.srv.db.Deliveries()
		t.Errorf("BREAK: run 1 ended %s at the shutdown, and its failed event never reached the receiver (stored deliveries: %d)", r.Status, len(ds))
	}
}

// HELD. Refusals of launches carrying a sensitive answer (given twice,
// with a required answer missing, with a control character) put neither
// the answer nor its quoted form in the operator log's refusal record.
func TestAttack14RefusalsKeepSensitiveAnswersOut(t *testing.T) {
	const canary = "Refusal-Canary-5512"
	h, logs := newLoggedHarness(t, "", secretDataTemplate)
	h.ssh("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary, "--var", "token="+canary+"x")
	h.ssh("alice", "launch", "data-secret", "--var", "token="+canary)
	h.ssh("alice", "launch", "data-secret", "--var", "instances=1", "--var", "token="+canary+"\x01")
	h.ssh("carol", "launch", "data-secret", "--var", "instances=zz", "--var", "token="+canary)
	logs.waitFor(t, `got \"zz\"`)
	if n := strings.Count(logs.String(), `"msg":"refusal"`); n < 2 {
		t.Errorf("%d refusal records, want at least 2:\n%s", n, logs.String())
	}
	if found := leaks("operator log", []byte(logs.String()), []string{canary}); len(found) > 0 {
		t.Errorf("a sensitive answer in a refusal record: %v\n%s", found, logs.String())
	}
}

// HELD. A key moved on reload from carol (launch only) to a new user erin
// (approve): a fresh session with that key is erin's, not carol's.
func TestAttack14KeyMovedOnReload(t *testing.T) {
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
