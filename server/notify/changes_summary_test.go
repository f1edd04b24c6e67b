package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// An event's deliveries carry the change set's summary as
// changes_summary (json) and on the lines after the summary (Slack),
// asking for it once and only when a block names the event; without one
// the field is left out.
func TestAPayloadCarriesTheChangeSetsSummaryOnlyWhenOneIsGiven(t *testing.T) {
	r := store.Run{ID: "4", Kind: "apply", Template: "data", Requester: "alice", Status: store.StatusAwaitingApproval,
		Proposal: &store.Proposal{Digest: "sha256:d", Destroy: 2}}
	blocks := map[string]*config.Notify{
		"hook": {Name: "hook", Events: []string{config.EventAwaitingApproval}, Format: config.FormatJSON},
		"chat": {Name: "chat", Events: []string{config.EventAwaitingApproval}, Format: config.FormatSlack},
		"late": {Name: "late", Events: []string{config.EventApplied}},
	}
	const summary = "delete terraform_data.server[1]\nshow 4 --changes"
	asked := 0
	ds, err := Deliveries(r, config.EventAwaitingApproval, blocks, func() string { asked++; return summary })
	if err != nil || len(ds) != 2 || asked != 1 {
		t.Fatalf("%d deliveries (%v), the summary asked for %d times; want 2 and once", len(ds), err, asked)
	}
	var p Payload
	if err := json.Unmarshal(ds[0].Body, &p); err != nil || p.ChangesSummary != summary {
		t.Errorf("payload %s: %v", ds[0].Body, err)
	}
	slack, err := renderNotification(blocks["chat"], ds[0])
	var text struct{ Text string }
	if err != nil || json.Unmarshal(slack, &text) != nil || !strings.HasSuffix(text.Text, "awaits approval; plan: 0 to add, 0 to change, 2 to destroy\n"+summary) {
		t.Errorf("the Slack message %s (%v) does not end with the summary", slack, err)
	}
	if _, err := Deliveries(r, config.EventApproved, blocks, func() string { asked++; return summary }); err != nil || asked != 1 {
		t.Errorf("an event no block names asked for the summary (%v)", err)
	}
	ds, _ = Deliveries(r, config.EventAwaitingApproval, blocks, nil)
	if strings.Contains(string(ds[0].Body), "changes_summary") {
		t.Errorf("a payload without a change set has changes_summary: %s", ds[0].Body)
	}
	slack, _ = renderNotification(blocks["chat"], ds[0])
	if strings.Contains(string(slack), `\n`) {
		t.Errorf("a Slack message without a change set has more than its line: %s", slack)
	}
}
