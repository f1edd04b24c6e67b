package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// A change set's summary holds addresses and values the plan's author or a
// requester's answers chose (a for_each key, a trigger). In a Slack message
// they stay text: Slack's control characters (&, <, >) are escaped as Slack
// asks, so no value pings a channel or shows a link under other words.
func TestASlackMessageCarriesNoMarkupFromTheChangeSet(t *testing.T) {
	r := store.Run{ID: "4", Kind: "apply", Template: "data", Requester: "alice", Status: store.StatusAwaitingApproval,
		Proposal: &store.Proposal{Digest: "sha256:d", Destroy: 1}}
	blocks := map[string]*config.Notify{"chat": {Name: "chat", Events: []string{config.EventAwaitingApproval}, Format: config.FormatSlack}}
	const summary = "-/+ terraform_data.a[\"<!channel>\"]\n      ~ triggers_replace[0] = \"<https://evil.example/approve|show 4 --changes>\" -> \"a&b\"\nshow 4 --changes"
	ds, err := Deliveries(r, config.EventAwaitingApproval, blocks, func() string { return summary })
	if err != nil || len(ds) != 1 {
		t.Fatalf("%d deliveries (%v); want 1", len(ds), err)
	}
	slack, err := renderNotification(blocks["chat"], ds[0])
	var msg struct{ Text string }
	if err != nil || json.Unmarshal(slack, &msg) != nil {
		t.Fatalf("the Slack message %s (%v) does not read", slack, err)
	}
	if strings.ContainsAny(msg.Text, "<>") {
		t.Errorf("the Slack message's text holds Slack markup: %q", msg.Text)
	}
	for _, want := range []string{"&lt;!channel&gt;", "&lt;https://evil.example/approve|show 4 --changes&gt;", "a&amp;b"} {
		if !strings.Contains(msg.Text, want) {
			t.Errorf("the Slack message's text %q does not hold %q", msg.Text, want)
		}
	}
	if !strings.HasSuffix(msg.Text, "\nshow 4 --changes") {
		t.Errorf("the Slack message's text %q does not end with the show command", msg.Text)
	}
}
