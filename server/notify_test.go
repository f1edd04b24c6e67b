package server

import (
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/notify"
)

const (
	notifySecret = "hook-secret-canary-7d1e0b55"
	urlToken     = "T0KEN-url-canary-e4f2a9"
)

// receiver is a webhook receiver for tests (testkit.Receiver): it records
// every request.
type receiver = testkit.Receiver

type received = testkit.Received

func notifyBlock(name, url, format, events string) string {
	secret := ""
	if format == "json" {
		secret = fmt.Sprintf("  secret = %q\n", notifySecret)
	}
	return fmt.Sprintf("notify %q {\n  url = %q\n%s  format = %q\n  events = %s\n}\n", name, url, secret, format, events)
}

// fastNotify makes retries quick for tests.
func fastNotify(o *Options) { o.NotifyBackoff, o.NotifyTimeout = 50*time.Millisecond, 2*time.Second }

// One signed awaiting_approval POST whose signature verifies with the
// configured secret, then approved and applied; a Slack block gets
// {"text"}; nothing secret (the answer, the credential, the URL's token,
// the notify secret) in any body nor in the operator log.
func TestNotifySignedAndNothingSecret(t *testing.T) {
	rc := &receiver{}
	ts := httptest.NewServer(rc)
	defer ts.Close()
	extra := heldSecretTemplate + notifyBlock("hook", ts.URL+"/hook/"+urlToken, "json", `["awaiting_approval", "approved", "applied"]`) +
		notifyBlock("chat", ts.URL+"/chat", "slack", `["awaiting_approval"]`)
	logs := &logBuffer{}
	h := writeHarness(t, "", extra)
	h.logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.tune = fastNotify
	h.start()
	h.sshStdin("alice", toJSON(map[string]string{"db_password": canaryDB}), "launch", "held-secret", "--answers", "-")
	h.waitStatus("1", StatusAwaitingApproval)
	got := rc.WaitFor(t, "awaiting_approval on both", func(g []received) bool { return len(g) >= 2 })
	digest := h.show("bob", "1").Proposal.Digest
	var hook received
	for _, g := range got {
		if strings.HasPrefix(g.Path, "/hook/") {
			hook = g
		} else if g.Path != "/chat" || !strings.Contains(string(g.Body), `"text":"Switchtender: run 1 (apply of held-secret by alice) awaits approval`) {
			t.Errorf("slack delivery %s %s", g.Path, g.Body)
		}
	}
	if want := notify.Sign(notifySecret, hook.Body); hook.Sig != want || !hmac.Equal([]byte(hook.Sig), []byte(want)) {
		t.Errorf("signature %q does not verify (want %q)", hook.Sig, want)
	}
	var p notify.Payload
	if err := json.Unmarshal(hook.Body, &p); err != nil || p.Event != "awaiting_approval" || p.Run != "1" || p.Template != "held-secret" ||
		p.Requester != "alice" || p.Digest != digest || p.Counts == nil || hook.Event != "awaiting_approval" {
		t.Errorf("payload %s: %v", hook.Body, err)
	}
	h.mustSSH("bob", "approve", "1", "--digest", digest)
	h.waitStatus("1", StatusSucceeded)
	got = rc.WaitFor(t, "approved and applied", func(g []received) bool { return len(g) >= 4 })
	var events []string
	canaries := []string{canaryDB, canaryCloud, canaryDerived(), notifySecret, urlToken}
	for _, g := range got {
		if strings.HasPrefix(g.Path, "/hook/") {
			events = append(events, g.Event)
		}
		if found := leaks("notification "+g.Path, g.Body, canaries[:3]); len(found) > 0 {
			t.Errorf("secret in a notification: %v", found)
		}
		if strings.Contains(string(g.Body), notifySecret) || strings.Contains(string(g.Body), urlToken) {
			t.Errorf("the notify secret or URL in a body: %s", g.Body)
		}
	}
	if strings.Join(events, " ") != "awaiting_approval approved applied" {
		t.Errorf("hook events %v", events)
	}
	if found := leaks("operator log", []byte(logs.String()), canaries); len(found) > 0 {
		t.Errorf("secrets in the operator log: %v", found)
	}
}

// freeAddr is a loopback address nothing listens on (for now).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// The receiver is down (connection refused) while a run is held, and
// through a restart: the delivery waits in the store, retried, and is
// delivered once the receiver comes back, exactly once.
func TestNotifyReceiverDownThenUp(t *testing.T) {
	addr := freeAddr(t)
	h := writeHarness(t, metricsListen, dataTemplates+approveAllData+notifyBlock("hook", "http://"+addr+"/in", "json", `["awaiting_approval"]`))
	h.tune = fastNotify
	h.start()
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := h.scrape("/metrics")
		if metricValue(body, `switchtender_notify_failures_total{notify="hook"}`) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempts counted:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.restart()
	if ds, err := h.srv.db.Deliveries(); err != nil || len(ds) != 1 || ds[0].Attempts < 2 {
		t.Fatalf("after the restart the store holds %+v (%v), want the one delivery with its attempts", ds, err)
	}
	rc := &receiver{}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the receiver's port was taken meanwhile: %v", err)
	}
	ts := &httptest.Server{Listener: ln, Config: &http.Server{Handler: rc}}
	ts.Start()
	defer ts.Close()
	got := rc.WaitFor(t, "the delivery after the receiver came back", func(g []received) bool { return len(g) >= 1 })
	if got[0].Event != "awaiting_approval" || got[0].Sig != notify.Sign(notifySecret, got[0].Body) {
		t.Errorf("delivery %+v", got[0])
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("%d deliveries, want exactly 1", n)
	}
	if ds, _ := h.srv.db.Deliveries(); len(ds) != 0 {
		t.Errorf("delivered, yet the store still holds %+v", ds)
	}
}

// Hostile receivers — one that never answers, one that answers 500
// forever, one that answers with 256 MiB — never slow a run: the whole
// launch, hold, approve, apply happens while the silent one still holds
// its first request; the 500 one is retried; the huge one counts as
// delivered without being read whole; Close does not wait for them.
func TestNotifyHostileReceiversNeverSlowARun(t *testing.T) {
	silent := &receiver{Hold: make(chan struct{})}
	failing := &receiver{Code: 500}
	huge := &receiver{Huge: true}
	var servers []*httptest.Server
	for _, rc := range []*receiver{silent, failing, huge} {
		servers = append(servers, httptest.NewServer(rc))
	}
	defer func() {
		close(silent.Hold)
		for _, ts := range servers {
			ts.Close()
		}
	}()
	all := `["awaiting_approval", "approved", "applied"]`
	extra := dataTemplates + approveAllData + notifyBlock("silent", servers[0].URL, "json", all) +
		notifyBlock("failing", servers[1].URL, "json", all) + notifyBlock("huge", servers[2].URL, "slack", all)
	h := writeHarness(t, metricsListen, extra)
	h.tune = func(o *Options) { o.NotifyBackoff, o.NotifyTimeout = 50*time.Millisecond, time.Hour }
	h.start()
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	silent.WaitFor(t, "the silent receiver's first request", func(g []received) bool { return len(g) == 1 })
	h.mustSSH("bob", "approve", "1", "--digest", h.show("bob", "1").Proposal.Digest)
	h.waitStatus("1", StatusSucceeded)
	if n := len(silent.Requests()); n != 1 {
		t.Fatalf("the silent receiver got %d requests", n)
	}
	select {
	case <-silent.Hold:
		t.Fatal("the silent receiver was released before the run ended")
	default:
	}
	failing.WaitFor(t, "retries of the failing receiver", func(g []received) bool { return len(g) >= 4 })
	huge.WaitFor(t, "the huge receiver's three events", func(g []received) bool { return len(g) >= 3 })
	_, body := h.scrape("/metrics")
	if v := metricValue(body, `switchtender_notify_deliveries_total{notify="huge"}`); v != 3 {
		t.Errorf("huge receiver deliveries %v, want 3", v)
	}
	if v := metricValue(body, `switchtender_notify_deliveries_total{notify="failing"}`); v > 0 {
		t.Errorf("a 500 counted as delivered: %v", v)
	}
	start := time.Now()
	h.stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close waited %v for a receiver that never answers", d)
	}
}

// A delivery whose notify block a reload removed is dropped, not sent.
func TestNotifyBlockRemovedByReload(t *testing.T) {
	rc := &receiver{Hold: make(chan struct{})}
	ts := httptest.NewServer(rc)
	defer func() { close(rc.Hold); ts.Close() }()
	h := writeHarness(t, "", dataTemplates+approveAllData+notifyBlock("gone", ts.URL, "json", `["awaiting_approval", "approved"]`))
	h.tune = func(o *Options) { o.NotifyBackoff, o.NotifyTimeout = 50*time.Millisecond, time.Hour }
	h.start()
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	rc.WaitFor(t, "the first event", func(g []received) bool { return len(g) == 1 }) // held there
	h.mustSSH("bob", "approve", "1", "--digest", h.show("bob", "1").Proposal.Digest)
	b, _ := os.ReadFile(h.cfgPath)
	os.WriteFile(h.cfgPath, []byte(strings.Split(string(b), "notify \"gone\"")[0]), 0o600)
	h.reloadWith("")
	rc.Hold <- struct{}{} // let the first attempt end (it was sent to the old block)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, _ := h.srv.db.Deliveries()
		if len(ds) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries of a removed block still stored: %+v", ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("%d requests reached the removed block's receiver, want 1", n)
	}
}

// Promise (docs/notifications.md, brief): a delivery is "never delivered
// twice to a receiver that answered 2xx". Once, a delivery whose receiver had
// answered 200 when the server shut down mid-body was kept and POSTed again
// after the restart with the same delivery ID, because the stop was checked
// before the answer.
func TestNotifyNeverDeliversTwiceAfterA2xx(t *testing.T) {
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

// A receiver cannot make the server follow a redirect: a 302 to another
// receiver is a failed attempt (retried), and the target never hears of it.
func TestNotifyFollowsNoRedirect(t *testing.T) {
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
	if n := len(target.Requests()); n != 0 {
		t.Errorf("the redirect was followed: the target got %d requests", n)
	}
}

// A notify URL with credentials and a token
// (http://user:pass@host/path?token=...) that cannot be reached: the operator
// log's retry records carry neither the userinfo nor the token.
func TestNotifyURLCredentialsStayOutOfTheLog(t *testing.T) {
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

// Promise: a run's events reach its receivers and "deliveries survive a
// restart". a run executing when the server stops ends interrupted (a
// "failed" event); that event is delivered after the next start.
func TestNotifyDeliversARunInterruptedAtShutdown(t *testing.T) {
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
	if !r.Status.Final() {
		t.Fatalf("run 1 after the restart: %s", r.Status)
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(rc.Requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(rc.Requests()) == 0 {
		ds, _ := h.srv.db.Deliveries()
		t.Errorf("BREAK: run 1 ended %s at the shutdown, and its failed event never reached the receiver (stored deliveries: %d)", r.Status, len(ds))
	}
}
