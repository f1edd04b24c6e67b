// Package notify sends webhook notifications of run events (docs/notifications.md): a run event becomes one delivery per notify block that
// names the event. Deliveries are posted in memory by the run's own
// goroutine (a lock and an append: never a write, never the network),
// stored by the notifier's goroutine, and sent in the background with
// retries and backoff; a stored delivery survives a restart.
package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

const (
	notifyGiveUp     = 24 * time.Hour  // a delivery older than this is dropped after a failed attempt
	notifyMaxBackoff = 5 * time.Minute // the longest wait between attempts
	notifyParallel   = 4               // deliveries in flight at once
	notifyReadLimit  = 64 << 10        // bytes of a receiver's answer read (and discarded)
)

// Payload is the json format's body; see docs/notifications.md.
// It holds names, counts, a digest, a one-line summary and the change
// set's summary: nothing secret.
type Payload struct {
	Event         string    `json:"event"`
	Run           string    `json:"run"`
	Template      string    `json:"template"`
	Kind          string    `json:"kind"`
	Status        string    `json:"status"`
	Requester     string    `json:"requester"`
	RequesterKind string    `json:"requester_kind"`
	Digest        string    `json:"digest,omitempty"`
	Counts        *Counts   `json:"counts,omitempty"`
	Drift         *int      `json:"drift,omitempty"` // resources changed outside OpenTofu (event drift)
	Summary       string    `json:"summary"`
	At            time.Time `json:"at"`

	// ChangesSummary is, for event awaiting_approval of a run whose saved
	// plan has a change set, its short form (planview.Summary, at most
	// ChangesSummaryLimit bytes, ending with the `show RUN --changes`
	// command for the rest); "" (left out) otherwise.
	ChangesSummary string `json:"changes_summary,omitempty"`
}

// ChangesSummaryLimit bounds Payload.ChangesSummary, in bytes.
const ChangesSummaryLimit = 2000

// Counts are a proposal's counts.
type Counts struct {
	Add     int `json:"add"`
	Change  int `json:"change"`
	Destroy int `json:"destroy"`
	Replace int `json:"replace"`
}

// Store is what the notifier needs from the store: the deliveries kept
// until they are sent or given up.
type Store interface {
	AddDeliveries(ds []store.Delivery) error
	Deliveries() ([]store.Delivery, error)
	PutDelivery(d store.Delivery) error
	DeleteDelivery(id string) error
}

// Meters are the metrics the notifier keeps: deliveries sent and attempts
// failed, by notify block, and deliveries waiting in the store.
type Meters struct {
	Sent, Failed *prometheus.CounterVec
	Queue        prometheus.Gauge
}

// Options are a Notifier's dependencies and timings.
type Options struct {
	Store  Store
	Blocks func() map[string]*config.Notify // the notify blocks in force now
	Log    *slog.Logger
	Meters Meters
	// Backoff is the wait before a failed delivery's first retry; it
	// doubles up to five minutes. 0 means 1 s.
	Backoff time.Duration
	// Timeout bounds one attempt. 0 means 10 s.
	Timeout time.Duration
}

// Notifier sends stored deliveries in the background.
type Notifier struct {
	db      Store
	blocks  func() map[string]*config.Notify
	log     *slog.Logger
	meters  Meters
	client  *http.Client
	backoff time.Duration // the first retry's wait; doubles up to notifyMaxBackoff
	timeout time.Duration // one attempt's bound

	mu       sync.Mutex
	pending  []store.Delivery  // posted, not yet stored
	inflight map[string]string // delivery ID -> notify block, of attempts in flight
	wake     chan struct{}
	wg       sync.WaitGroup
}

// New returns a Notifier on o; Start starts it.
func New(o Options) *Notifier {
	backoff, timeout := o.Backoff, o.Timeout
	if backoff <= 0 {
		backoff = time.Second
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Notifier{db: o.Store, blocks: o.Blocks, log: o.Log, meters: o.Meters, client: client, backoff: backoff, timeout: timeout,
		inflight: map[string]string{}, wake: make(chan struct{}, 1)}
}

// Post queues deliveries in memory and wakes the notifier; it never blocks.
func (n *Notifier) Post(ds ...store.Delivery) {
	if len(ds) == 0 {
		return
	}
	n.mu.Lock()
	n.pending = append(n.pending, ds...)
	n.mu.Unlock()
	n.poke()
}

func (n *Notifier) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Start runs the notifier until ctx ends; Wait waits for it to stop.
func (n *Notifier) Start(ctx context.Context) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.loop(ctx)
	}()
}

// Wait returns once the notifier Start started has stopped.
func (n *Notifier) Wait() { n.wg.Wait() }

// loop stores what was posted, starts what is due, and sleeps until the
// next is due or something is posted.
func (n *Notifier) loop(ctx context.Context) {
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
func (n *Notifier) store() {
	n.mu.Lock()
	ds := n.pending
	n.pending = nil
	n.mu.Unlock()
	if len(ds) == 0 {
		return
	}
	if err := n.db.AddDeliveries(ds); err != nil {
		n.log.Error("storing notifications; kept in memory to try again", "count", len(ds), "err", err)
		n.mu.Lock()
		n.pending = append(ds, n.pending...)
		n.mu.Unlock()
	}
}

// dispatch starts, for each notify block with nothing in flight, its
// oldest delivery if it is due (so a receiver gets its events in order, one
// at a time), up to notifyParallel at once, and returns when the next
// delivery not started is due (zero: none, or only ones waiting for a slot).
func (n *Notifier) dispatch(ctx context.Context) time.Time {
	ds, err := n.db.Deliveries()
	if err != nil {
		n.log.Error("reading notifications", "err", err)
		return time.Now().Add(n.backoff)
	}
	n.meters.Queue.Set(float64(len(ds)))
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
func (n *Notifier) attempt(ctx context.Context, d store.Delivery) {
	defer n.wg.Done()
	defer func() {
		n.mu.Lock()
		delete(n.inflight, d.ID)
		n.mu.Unlock()
		n.poke()
	}()
	block := n.blocks()[d.Notify]
	if block == nil {
		n.log.Warn("dropped a notification: its notify block is no longer configured", "notify", d.Notify, "event", d.Event, "run", d.Run)
		n.drop(d)
		return
	}
	err := n.send(ctx, block, d)
	if err != nil && ctx.Err() != nil {
		return // stopping: the delivery stays stored for the next start
	}
	if err == nil { // the receiver answered 2xx: delivered, even while stopping
		n.meters.Sent.WithLabelValues(d.Notify).Inc()
		n.log.Debug("notification delivered", "notify", d.Notify, "event", d.Event, "run", d.Run, "attempts", d.Attempts+1)
		n.drop(d)
		return
	}
	n.failed(d, err)
}

// failed records a failed attempt: retried after a backoff, or dropped
// once older than notifyGiveUp.
func (n *Notifier) failed(d store.Delivery, err error) {
	n.meters.Failed.WithLabelValues(d.Notify).Inc()
	d.Attempts++
	d.LastError = err.Error()
	if time.Since(d.CreatedAt) > notifyGiveUp {
		n.log.Error("gave up a notification", "notify", d.Notify, "event", d.Event, "run", d.Run, "attempts", d.Attempts, "err", d.LastError)
		n.drop(d)
		return
	}
	wait := n.backoff << min(d.Attempts-1, 20)
	if wait > notifyMaxBackoff || wait <= 0 {
		wait = notifyMaxBackoff
	}
	d.NextAt = time.Now().Add(wait)
	n.log.Warn("notification not delivered; will retry", "notify", d.Notify, "event", d.Event, "run", d.Run,
		"attempts", d.Attempts, "retry_in", wait.String(), "err", d.LastError)
	if err := n.db.PutDelivery(d); err != nil && !errors.Is(err, store.ErrNotFound) {
		n.log.Error("recording a failed notification", "notify", d.Notify, "err", err)
	}
}

func (n *Notifier) drop(d store.Delivery) {
	if err := n.db.DeleteDelivery(d.ID); err != nil {
		n.log.Error("removing a notification", "notify", d.Notify, "err", err)
	}
}

// send POSTs d to block's URL in its format; nil on a 2xx answer. The
// error never holds the URL (a webhook URL often carries a token).
func (n *Notifier) send(ctx context.Context, block *config.Notify, d store.Delivery) error {
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
		req.Header.Set("X-Switchtender-Signature", Sign(block.Secret, body))
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

// Sign is X-Switchtender-Signature's value: "sha256=" and the hex
// HMAC-SHA256 of body keyed with secret (GitHub's webhook scheme).
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// renderNotification is the body block's format sends for d: the stored
// payload as is (json), or Slack's {"text": summary}, the change set's
// summary on the lines after it when the payload has one.
func renderNotification(block *config.Notify, d store.Delivery) ([]byte, error) {
	if block.Format != config.FormatSlack {
		return d.Body, nil
	}
	var p Payload
	if err := json.Unmarshal(d.Body, &p); err != nil {
		return nil, fmt.Errorf("reading the stored notification: %w", err)
	}
	b, err := json.Marshal(struct {
		Text string `json:"text"`
	}{slackText(p)})
	return screentext.JSON(b), err
}

// slackText is the text of p's Slack message, with Slack's control
// characters escaped (slackEscaper).
func slackText(p Payload) string {
	text := "Switchtender: " + p.Summary
	if p.ChangesSummary != "" {
		text += "\n" + p.ChangesSummary
	}
	return slackEscaper.Replace(text)
}

// slackEscaper escapes the three characters Slack reads as markup in a
// message's text (&, <, >: a <!channel> mention, a <URL|label> link) as
// the entities Slack shows as the characters themselves (Slack's
// "Formatting text for app surfaces", escaping text). An address or a
// value in a change set's summary thus stays text.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Deliveries are the deliveries event of r makes: one for each of blocks
// that names the event, in the blocks' name order, all with the same json
// payload; none when no block names it. changes (nil: none) gives the
// payload's changes_summary; it is called once, and only when a block
// names the event. The error is the payload's encoding failing.
func Deliveries(r store.Run, event string, blocks map[string]*config.Notify, changes func() string) ([]store.Delivery, error) {
	var ds []store.Delivery
	var body []byte
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		if !slices.Contains(blocks[name].Events, event) {
			continue
		}
		if body == nil {
			p := PayloadOf(r, event)
			if changes != nil {
				p.ChangesSummary = changes()
			}
			var err error
			if body, err = json.Marshal(p); err != nil {
				return nil, fmt.Errorf("encoding the payload of run %s: %w", r.ID, err)
			}
			body = screentext.JSON(body)
		}
		ds = append(ds, store.Delivery{Notify: name, Event: event, Run: r.ID, Body: body, CreatedAt: time.Now(), NextAt: time.Now()})
	}
	return ds, nil
}

// EventOf names the notification event of r's status change from one
// status to another ("" for none).
func EventOf(r store.Run, from, to store.Status) string {
	switch to {
	case store.StatusAwaitingApproval:
		return config.EventAwaitingApproval
	case store.StatusQueued:
		if from == store.StatusAwaitingApproval {
			return config.EventApproved
		}
	case store.StatusRejected:
		return config.EventRejected
	case store.StatusStale:
		return config.EventStale
	case store.StatusFailed, store.StatusRefused, store.StatusInterrupted:
		return config.EventFailed
	case store.StatusSucceeded:
		return successEvent(r)
	}
	return ""
}

// successEvent names the event of r succeeding: applied for an apply or a
// reconcile, drift for a check that found drift, "" otherwise.
func successEvent(r store.Run) string {
	k := store.Kind(r.Kind)
	switch {
	case k == store.KindApply || k == store.KindReconcile:
		return config.EventApplied
	case k == store.KindCheck && r.Check != nil && r.Check.Drifted:
		return config.EventDrift
	}
	return ""
}

// PayloadOf is the json payload of event for r.
func PayloadOf(r store.Run, event string) Payload {
	p := Payload{Event: event, Run: r.ID, Template: r.Template, Kind: string(r.Kind), Status: string(r.Status),
		Requester: r.Requester, RequesterKind: string(r.RequesterKind), At: time.Now().UTC()}
	prop := r.Proposal
	if event == config.EventDrift && r.Check != nil {
		prop = r.Check.Plan
		n := len(r.Check.Drift)
		p.Drift = &n
	}
	if prop != nil {
		p.Digest = prop.Digest
		p.Counts = &Counts{Add: prop.Add, Change: prop.Change, Destroy: prop.Destroy, Replace: prop.Replace}
	}
	p.Summary = summaryOf(p)
	return p
}

// summaryOf is the payload's one line: what happened to which run, and
// its counts; no link, no value.
func summaryOf(p Payload) string {
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
