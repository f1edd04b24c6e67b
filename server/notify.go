package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchtender/switchtender/screentext"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// Notifications (README "Notifications"): a run event becomes one delivery
// per notify block that names the event. Deliveries are posted in memory by
// the run's own goroutine (a lock and an append: never a write, never the
// network), stored by the notifier's goroutine, and sent in the background
// with retries and backoff; a stored delivery survives a restart.

const (
	notifyGiveUp     = 24 * time.Hour  // a delivery older than this is dropped after a failed attempt
	notifyMaxBackoff = 5 * time.Minute // the longest wait between attempts
	notifyParallel   = 4               // deliveries in flight at once
	notifyReadLimit  = 64 << 10        // bytes of a receiver's answer read (and discarded)
)

// notifyPayload is the json format's body; see README "Notifications".
// It holds names, counts, a digest and a one-line summary: nothing secret.
type notifyPayload struct {
	Event         string        `json:"event"`
	Run           string        `json:"run"`
	Template      string        `json:"template"`
	Kind          string        `json:"kind"`
	Status        string        `json:"status"`
	Requester     string        `json:"requester"`
	RequesterKind string        `json:"requester_kind"`
	Digest        string        `json:"digest,omitempty"`
	Counts        *notifyCounts `json:"counts,omitempty"`
	Drift         *int          `json:"drift,omitempty"` // resources changed outside OpenTofu (event drift)
	Summary       string        `json:"summary"`
	At            time.Time     `json:"at"`
}

// notifyCounts are a proposal's counts.
type notifyCounts struct {
	Add     int `json:"add"`
	Change  int `json:"change"`
	Destroy int `json:"destroy"`
	Replace int `json:"replace"`
}

// notifier sends stored deliveries in the background.
type notifier struct {
	s       *Server
	client  *http.Client
	backoff time.Duration // the first retry's wait; doubles up to notifyMaxBackoff
	timeout time.Duration // one attempt's bound

	mu       sync.Mutex
	pending  []store.Delivery  // posted, not yet stored
	inflight map[string]string // delivery ID -> notify block, of attempts in flight
	wake     chan struct{}
	wg       sync.WaitGroup
}

func newNotifier(s *Server, backoff, timeout time.Duration) *notifier {
	if backoff <= 0 {
		backoff = time.Second
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &notifier{s: s, client: client, backoff: backoff, timeout: timeout,
		inflight: map[string]string{}, wake: make(chan struct{}, 1)}
}

// post queues deliveries in memory and wakes the notifier; it never blocks.
func (n *notifier) post(ds ...store.Delivery) {
	if len(ds) == 0 {
		return
	}
	n.mu.Lock()
	n.pending = append(n.pending, ds...)
	n.mu.Unlock()
	n.poke()
}

func (n *notifier) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// start runs the notifier until ctx ends; wait waits for it to stop.
func (n *notifier) start(ctx context.Context) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.loop(ctx)
	}()
}

func (n *notifier) wait() { n.wg.Wait() }

// loop stores what was posted, starts what is due, and sleeps until the
// next is due or something is posted.
func (n *notifier) loop(ctx context.Context) {
	for {
		n.store()
		next := n.dispatch(ctx)
		wait := time.Until(next)
		if next.IsZero() || wait > time.Minute {
			wait = time.Minute
		}
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			n.store()
			return
		case <-n.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// store writes posted deliveries to the store; on failure they stay posted.
func (n *notifier) store() {
	n.mu.Lock()
	ds := n.pending
	n.pending = nil
	n.mu.Unlock()
	if len(ds) == 0 {
		return
	}
	if err := n.s.db.AddDeliveries(ds); err != nil {
		n.s.log.Error("storing notifications; kept in memory to try again", "count", len(ds), "err", err)
		n.mu.Lock()
		n.pending = append(ds, n.pending...)
		n.mu.Unlock()
	}
}

// dispatch starts, for each notify block with nothing in flight, its
// oldest delivery if it is due (so a receiver gets its events in order, one
// at a time), up to notifyParallel at once, and returns when the next
// delivery not started is due (zero: none, or only ones waiting for a slot).
func (n *notifier) dispatch(ctx context.Context) time.Time {
	ds, err := n.s.db.Deliveries()
	if err != nil {
		n.s.log.Error("reading notifications", "err", err)
		return time.Now().Add(n.backoff)
	}
	n.s.metrics.notifyQueue.Set(float64(len(ds)))
	var next time.Time
	n.mu.Lock()
	defer n.mu.Unlock()
	seen := map[string]bool{} // blocks whose oldest delivery was looked at
	for _, b := range n.inflight {
		seen[b] = true
	}
	for _, d := range ds {
		if seen[d.Notify] {
			continue
		}
		seen[d.Notify] = true
		switch {
		case len(n.inflight) >= notifyParallel:
			// Every slot is taken: an attempt that ends wakes the loop.
		case d.NextAt.After(time.Now()):
			if next.IsZero() || d.NextAt.Before(next) {
				next = d.NextAt
			}
		default:
			n.inflight[d.ID] = d.Notify
			n.wg.Add(1)
			go n.attempt(ctx, d)
		}
	}
	return next
}

// attempt sends one delivery and records how it went.
func (n *notifier) attempt(ctx context.Context, d store.Delivery) {
	defer n.wg.Done()
	defer func() {
		n.mu.Lock()
		delete(n.inflight, d.ID)
		n.mu.Unlock()
		n.poke()
	}()
	block := n.s.config().Notifies[d.Notify]
	if block == nil {
		n.s.log.Warn("dropped a notification: its notify block is no longer configured", "notify", d.Notify, "event", d.Event, "run", d.Run)
		n.drop(d)
		return
	}
	err := n.send(ctx, block, d)
	if err != nil && ctx.Err() != nil {
		return // stopping: the delivery stays stored for the next start
	}
	if err == nil { // the receiver answered 2xx: delivered, even while stopping
		n.s.metrics.notifySent.WithLabelValues(d.Notify).Inc()
		n.s.log.Debug("notification delivered", "notify", d.Notify, "event", d.Event, "run", d.Run, "attempts", d.Attempts+1)
		n.drop(d)
		return
	}
	n.failed(d, err)
}

// failed records a failed attempt: retried after a backoff, or dropped
// once older than notifyGiveUp.
func (n *notifier) failed(d store.Delivery, err error) {
	n.s.metrics.notifyFailed.WithLabelValues(d.Notify).Inc()
	d.Attempts++
	d.LastError = err.Error()
	if time.Since(d.CreatedAt) > notifyGiveUp {
		n.s.log.Error("gave up a notification", "notify", d.Notify, "event", d.Event, "run", d.Run, "attempts", d.Attempts, "err", d.LastError)
		n.drop(d)
		return
	}
	wait := n.backoff << min(d.Attempts-1, 20)
	if wait > notifyMaxBackoff || wait <= 0 {
		wait = notifyMaxBackoff
	}
	d.NextAt = time.Now().Add(wait)
	n.s.log.Warn("notification not delivered; will retry", "notify", d.Notify, "event", d.Event, "run", d.Run,
		"attempts", d.Attempts, "retry_in", wait.String(), "err", d.LastError)
	if err := n.s.db.PutDelivery(d); err != nil && !errors.Is(err, store.ErrNotFound) {
		n.s.log.Error("recording a failed notification", "notify", d.Notify, "err", err)
	}
}

func (n *notifier) drop(d store.Delivery) {
	if err := n.s.db.DeleteDelivery(d.ID); err != nil {
		n.s.log.Error("removing a notification", "notify", d.Notify, "err", err)
	}
}

// send POSTs d to block's URL in its format; nil on a 2xx answer. The
// error never holds the URL (a webhook URL often carries a token).
func (n *notifier) send(ctx context.Context, block *config.Notify, d store.Delivery) error {
	body, err := renderNotification(block, d)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, block.URL, strings.NewReader(string(body)))
	if err != nil {
		return errors.New("building the request failed")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "switchtender")
	req.Header.Set("X-Switchtender-Event", d.Event)
	req.Header.Set("X-Switchtender-Delivery", d.ID)
	if block.Secret != "" {
		req.Header.Set("X-Switchtender-Signature", signature(block.Secret, body))
	}
	resp, err := n.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("POST failed: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, notifyReadLimit))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}

// signature is X-Switchtender-Signature's value: "sha256=" and the hex
// HMAC-SHA256 of body keyed with secret (GitHub's webhook scheme).
func signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// renderNotification is the body block's format sends for d: the stored
// payload as is (json), or Slack's {"text": summary}.
func renderNotification(block *config.Notify, d store.Delivery) ([]byte, error) {
	if block.Format != config.FormatSlack {
		return d.Body, nil
	}
	var p notifyPayload
	if err := json.Unmarshal(d.Body, &p); err != nil {
		return nil, fmt.Errorf("reading the stored notification: %w", err)
	}
	b, err := json.Marshal(struct {
		Text string `json:"text"`
	}{"Switchtender: " + p.Summary})
	return screentext.JSON(b), err
}

// notifyRun posts the deliveries a status change of r makes, if any.
func (s *Server) notifyRun(r store.Run, tn transitionNote) {
	event := eventOf(r, tn)
	if event == "" || s.notifier == nil {
		return
	}
	var ds []store.Delivery
	var body []byte
	blocks := s.config().Notifies
	for _, name := range sortedKeys(blocks) {
		if !slices.Contains(blocks[name].Events, event) {
			continue
		}
		if body == nil {
			var err error
			if body, err = json.Marshal(payloadOf(r, event)); err != nil {
				s.log.Error("encoding a notification", "run", r.ID, "err", err)
				return
			}
			body = screentext.JSON(body)
		}
		ds = append(ds, store.Delivery{Notify: name, Event: event, Run: r.ID, Body: body, CreatedAt: time.Now(), NextAt: time.Now()})
	}
	s.notifier.post(ds...)
}

// eventOf names the notification event of a status change ("" for none).
func eventOf(r store.Run, tn transitionNote) string {
	switch {
	case tn.to == StatusAwaitingApproval:
		return config.EventAwaitingApproval
	case tn.from == StatusAwaitingApproval && tn.to == StatusQueued:
		return config.EventApproved
	case tn.to == StatusRejected:
		return config.EventRejected
	case tn.to == StatusStale:
		return config.EventStale
	case tn.to == StatusFailed || tn.to == StatusRefused || tn.to == StatusInterrupted:
		return config.EventFailed
	case tn.to == StatusSucceeded && (Kind(r.Kind) == KindApply || Kind(r.Kind) == KindReconcile):
		return config.EventApplied
	case tn.to == StatusSucceeded && Kind(r.Kind) == KindCheck && r.Check != nil && r.Check.Drifted:
		return config.EventDrift
	}
	return ""
}

// payloadOf is the json payload of event for r.
func payloadOf(r store.Run, event string) notifyPayload {
	p := notifyPayload{Event: event, Run: r.ID, Template: r.Template, Kind: string(r.Kind), Status: string(r.Status),
		Requester: r.Requester, RequesterKind: string(r.RequesterKind), At: time.Now().UTC()}
	prop := r.Proposal
	if event == config.EventDrift && r.Check != nil {
		prop = r.Check.Plan
		n := len(r.Check.Drift)
		p.Drift = &n
	}
	if prop != nil {
		p.Digest = prop.Digest
		p.Counts = &notifyCounts{Add: prop.Add, Change: prop.Change, Destroy: prop.Destroy, Replace: prop.Replace}
	}
	p.Summary = summaryOf(p)
	return p
}

// summaryOf is the payload's one line: what happened to which run, and
// its counts; no link, no value.
func summaryOf(p notifyPayload) string {
	what := map[string]string{
		config.EventAwaitingApproval: "awaits approval", config.EventApproved: "was approved",
		config.EventRejected: "was rejected", config.EventApplied: "applied", config.EventFailed: "ended " + p.Status,
		config.EventStale: "went stale (nothing applied)", config.EventDrift: "found drift",
	}[p.Event]
	line := fmt.Sprintf("run %s (%s of %s by %s) %s", p.Run, p.Kind, screentext.Field(p.Template), screentext.Field(p.Requester), what)
	if p.Drift != nil {
		line += fmt.Sprintf(": %d changed outside OpenTofu", *p.Drift)
	}
	if c := p.Counts; c != nil {
		line += "; plan: " + screentext.PlanCounts(c.Add+c.Replace, c.Change, c.Destroy, 0, 0) // the three figures alone
	}
	return line
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
