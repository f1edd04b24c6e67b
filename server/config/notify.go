package config

import (
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Notification events a notify block may name (its `events` attribute).
const (
	EventAwaitingApproval = "awaiting_approval" // a run waits for approvers
	EventApproved         = "approved"          // approvers released it: it plans or applies next
	EventRejected         = "rejected"          // an approver rejected it
	EventApplied          = "applied"           // an apply or reconcile succeeded
	EventFailed           = "failed"            // it failed, was refused by a plan_gate, or was interrupted
	EventStale            = "stale"             // its proposal went stale: nothing applied
	EventDrift            = "drift"             // a drift check found drift
)

// Events lists every notification event, in the order docs/notifications.md gives.
var Events = []string{EventAwaitingApproval, EventApproved, EventRejected, EventApplied, EventFailed, EventStale, EventDrift}

// Notification formats (a notify block's `format`).
const (
	FormatJSON  = "json"  // Switchtender's payload, signed (docs/notifications.md)
	FormatSlack = "slack" // Slack's incoming-webhook shape: {"text": "..."}
)

// Notify is a `notify "name"` block: where to POST which events, and how.
// URL and Secret are secrets: they never reach a log or a payload.
type Notify struct {
	Name   string
	URL    string   // http or https
	Secret string   // HMAC-SHA256 key of X-Switchtender-Signature; required for json
	Events []string // each one of Events; default all
	Format string   // FormatJSON (default) or FormatSlack
	Line   string   // "file:line" of the block
}

var notifySchema = &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema{{Name: "url", Required: true}}, attrs("secret", "events", "format")...)}

// notify decodes a notify block; nil when it does not decode.
func (p *parser) notify(b *hcl.Block, name string) *Notify {
	c := p.content(b, notifySchema)
	n := &Notify{Name: name, Format: FormatJSON, Events: Events, Line: p.line(b.DefRange)}
	good := p.notifyURL(c, n)
	if v, a, ok := p.str(c, "format"); ok {
		if v != FormatJSON && v != FormatSlack {
			p.errorf(a.Expr.Range(), "Unknown format", "format = %q; give \"json\" (signed payload) or \"slack\" (incoming webhook)", v)
			good = false
		}
		n.Format = v
	} else if a != nil {
		good = false
	}
	if v, a, ok := p.str(c, "secret"); ok {
		n.Secret = v
		if len(v) < 16 {
			p.errorf(a.Expr.Range(), "Weak secret", "notify %q: secret is %d characters; give 16 or more (such as the output of `openssl rand -hex 32`)", name, len(v))
			good = false
		}
	} else if a != nil {
		good = false
	}
	if n.Format == FormatJSON && n.Secret == "" && good {
		p.errorf(b.DefRange, "Missing secret", "notify %q sends signed JSON: add secret = \"...\" (16 or more characters) so the receiver can verify X-Switchtender-Signature, or use format = \"slack\"", name)
		good = false
	}
	return p.notifyEvents(c, n, good)
}

// notifyURL reads url: an absolute http or https URL.
func (p *parser) notifyURL(c *hcl.BodyContent, n *Notify) bool {
	v, a, ok := p.str(c, "url")
	if !ok {
		return false
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL itself is not repeated: a webhook URL often holds a token.
		p.errorf(a.Expr.Range(), "Invalid URL", "notify %q: url must be an absolute http:// or https:// URL with a host", n.Name)
		return false
	}
	n.URL = v
	return true
}

// notifyEvents reads events: names from Events, at least one.
func (p *parser) notifyEvents(c *hcl.BodyContent, n *Notify, good bool) *Notify {
	refs, a, ok := p.strList(c, "events")
	if a != nil && !ok {
		return nil
	}
	if a != nil {
		n.Events = nil
		if len(refs) == 0 {
			p.errorf(a.Expr.Range(), "No events", "notify %q: events is empty; name one or more of %s, or leave it out for all", n.Name, strings.Join(Events, ", "))
			return nil
		}
		for _, r := range refs {
			if !slices.Contains(Events, r.name) {
				p.errorf(r.rng, "Unknown event", "notify %q: event %q is not one of %s", n.Name, r.name, strings.Join(Events, ", "))
				good = false
			}
			n.Events = append(n.Events, r.name)
		}
	}
	if !good {
		return nil
	}
	return n
}
