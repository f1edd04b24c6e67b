package forge

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// eventHeaders is the header each forge names its event in.
var eventHeaders = map[Type]string{Gitea: "X-Gitea-Event-Type", GitHub: "X-GitHub-Event", GitLab: "X-Gitlab-Event"}

// FuzzParse reads any body under any event name as each forge: Parse
// never panics, and what it accepts holds what checkEvent promises.
func FuzzParse(f *testing.F) {
	for key := range recordedEvents {
		forge, name, _ := strings.Cut(key, "/")
		h, body := loadDelivery(f, Type(forge), name)
		f.Add(forgeIndex(Type(forge)), h.Get(eventHeaders[Type(forge)]), body)
	}
	f.Add(uint8(1), "pull_request", []byte(`{"action":"opened","pull_request":{"number":1,"head":{"sha":"`+githubHead+`"}}}`))
	f.Fuzz(func(t *testing.T, i uint8, event string, body []byte) {
		forge := Types[int(i)%len(Types)]
		h, _ := loadDelivery(t, forge, signedDeliveries[forge])
		h.Set(eventHeaders[forge], event)
		ev, err := Parse(forge, h, body)
		if err != nil {
			return
		}
		if ev.DeliveryID == "" || ev.Type != forge || ev.Event != event {
			t.Fatalf("accepted without its headers read: %+v", ev)
		}
		if len(ev.Comment) > MaxComment || !utf8.ValidString(ev.Comment) {
			t.Fatalf("kept a comment of %d bytes, or not UTF-8", len(ev.Comment))
		}
		if err := checkEvent(ev); err != nil {
			t.Fatalf("accepted an Event checkEvent refuses: %v", err)
		}
		if checkStrictJSON(body) != nil {
			t.Fatal("accepted a body checkStrictJSON refuses")
		}
	})
}

func forgeIndex(t Type) uint8 {
	for i, f := range Types {
		if f == t {
			return uint8(i)
		}
	}
	return 0
}

// FuzzStrictJSON: a body checkStrictJSON accepts is one JSON object that
// encoding/json reads, with no name repeated in any object.
func FuzzStrictJSON(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,{"c":null}]}}`, `{"a":1,"A":2}`, `[1]`, `{"a":1} {}`, `{"a":"\u212a"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkStrictJSON(body) != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("accepted a body encoding/json refuses: %v", err)
		}
		if m == nil {
			t.Fatal("accepted a body that is not an object")
		}
	})
}
