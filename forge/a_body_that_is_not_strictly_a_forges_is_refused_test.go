package forge

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// editedBody is a recorded body with change applied to it as a JSON tree.
func editedBody(t *testing.T, body []byte, change func(m map[string]any)) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	change(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonMember(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

// refusedParse fails the test unless Parse refuses body with an error
// saying want.
func refusedParse(t *testing.T, forge Type, h http.Header, body []byte, want string) {
	t.Helper()
	ev, err := Parse(forge, h, body)
	if err == nil {
		t.Fatalf("Parse accepted it: %+v", ev)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Parse = %v, want an error saying %q", err, want)
	}
	if ev != (Event{}) {
		t.Errorf("Parse refused it but returned %+v", ev)
	}
}

func TestARepeatedMemberNameIsRefusedAtAnyDepth(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	cases := map[string][]byte{
		"top level":   []byte(`{"action":"opened","action":"closed"}`),
		"other case":  []byte(`{"action":"opened","Action":"closed"}`),
		"kelvin sign": []byte(`{"kind":"a","\u212aind":"b"}`),
		"nested":      bytes.Replace(body, []byte(`"sha": "`+githubHead+`"`), []byte(`"sha": "`+githubHead+`", "sha": "`+giteaHead+`"`), 1),
		"in an array": []byte(`{"labels":[{"name":"a","name":"b"}]}`),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if bytes.Equal(b, body) {
				t.Fatal("the body was not changed")
			}
			refusedParse(t, GitHub, h, b, "twice")
		})
	}
}

func TestTheSameNameInTwoObjectsIsNoRepeat(t *testing.T) {
	if err := checkStrictJSON([]byte(`{"head":{"sha":"a"},"base":{"sha":"b"},"list":[{"id":1},{"id":2}]}`)); err != nil {
		t.Errorf("checkStrictJSON refused a name used once per object: %v", err)
	}
}

func TestABodyThatIsNotOneJSONObjectIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	cases := map[string]struct {
		body []byte
		want string
	}{
		"an array":                 {[]byte(`[{"action":"opened"}]`), "not a JSON object"},
		"a string":                 {[]byte(`"opened"`), "not a JSON object"},
		"empty":                    {nil, "not JSON"},
		"not JSON":                 {[]byte(`action=opened`), "not JSON"},
		"a second object":          {append(append([]byte{}, body...), []byte(`{"action":"closed"}`)...), "data after"},
		"trailing garbage":         {append(append([]byte{}, body...), 'x'), "data after"},
		"an unclosed object":       {body[:len(body)-3], "not JSON"},
		"nested 40 deep":           {[]byte(`{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`), "deeper"},
		"larger than MaxBody":      {append([]byte(`{"a":"`), append(bytes.Repeat([]byte("x"), MaxBody), '"', '}')...), "more than"},
		"a member of another type": {editedBody(t, body, func(m map[string]any) { m["action"] = 7 }), `"action"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			refusedParse(t, GitHub, h, c.body, c.want)
		})
	}
	if _, err := Parse(GitHub, h, append(append([]byte{}, body...), " \n\t"...)); err != nil {
		t.Errorf("white space after the object is refused: %v", err)
	}
}

func TestAPullRequestNumberOutOfRangeIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	for name, n := range map[string]any{
		"huge":            json.Number("100000000000000000000000000000"),
		"above 2^31-1":    json.Number("2147483648"),
		"negative":        json.Number("-2"),
		"a fraction":      json.Number("2.5"),
		"a string":        "2",
		"zero (missing)":  json.Number("0"),
		"an exponent 1e3": json.Number("1e3"),
	} {
		t.Run(name, func(t *testing.T) {
			b := editedBody(t, body, func(m map[string]any) { jsonMember(m, "pull_request")["number"] = n })
			if _, err := Parse(GitHub, h, b); err == nil {
				t.Errorf("a pull request number of %v is accepted", n)
			}
		})
	}
}

func TestAPullRequestWithoutItsHeadCommitIsRefused(t *testing.T) {
	for _, c := range []struct {
		forge Type
		name  string
		head  []string
		field string
	}{
		{Gitea, "pull_request_opened", []string{"pull_request", "head"}, "sha"},
		{GitHub, "pull_request_opened", []string{"pull_request", "head"}, "sha"},
		{GitHub, "pull_request_closed_merged", []string{"pull_request", "head"}, "sha"},
		{GitLab, "merge_request_open", []string{"object_attributes", "last_commit"}, "id"},
		{GitLab, "merge_request_update_with_commits", []string{"object_attributes", "last_commit"}, "id"},
	} {
		t.Run(string(c.forge)+"/"+c.name, func(t *testing.T) {
			h, body := loadDelivery(t, c.forge, c.name)
			b := editedBody(t, body, func(m map[string]any) { delete(jsonMember(m, c.head...), c.field) })
			refusedParse(t, c.forge, h, b, "head commit")
		})
	}
}

func TestAHeadCommitThatIsNotLowercaseHexIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	for name, sha := range map[string]string{
		"upper case":      strings.ToUpper(githubHead),
		"39 digits":       githubHead[:39],
		"41 digits":       githubHead + "0",
		"not hex":         "zz26c3e57ca3a959ca5aad62de7213c562f8c821",
		"a branch name":   "main",
		"an option":       "--upload-pack=touch /tmp/x",
		"trailing space":  githubHead[:39] + " ",
		"a ref":           "refs/heads/main",
		"63 hex (sha256)": strings.Repeat("a", 63),
	} {
		t.Run(name, func(t *testing.T) {
			b := editedBody(t, body, func(m map[string]any) { jsonMember(m, "pull_request", "head")["sha"] = sha })
			refusedParse(t, GitHub, h, b, "40 or 64 lowercase hex")
		})
	}
	b := editedBody(t, body, func(m map[string]any) { jsonMember(m, "pull_request", "head")["sha"] = strings.Repeat("ab", 32) })
	if ev, err := Parse(GitHub, h, b); err != nil || ev.HeadSHA != strings.Repeat("ab", 32) {
		t.Errorf("a SHA-256 head commit is not read: %+v, %v", ev, err)
	}
}

func TestABeforeOrMergeCommitThatIsNotHexIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_synchronize")
	refusedParse(t, GitHub, h, editedBody(t, body, func(m map[string]any) { m["before"] = "HEAD~1" }), "before the push")
	h, body = loadDelivery(t, GitHub, "pull_request_closed_merged")
	refusedParse(t, GitHub, h, editedBody(t, body, func(m map[string]any) { jsonMember(m, "pull_request")["merge_commit_sha"] = "main" }), "merge commit")
	h, body = loadDelivery(t, GitLab, "merge_request_update_with_commits")
	refusedParse(t, GitLab, h, editedBody(t, body, func(m map[string]any) { jsonMember(m, "object_attributes")["oldrev"] = "0" }), "before the push")
}

func TestACommentLongerThanMaxCommentIsCutOnARuneBoundary(t *testing.T) {
	for _, c := range []struct {
		forge      Type
		name       string
		path       []string
		field      string
		text, want string
	}{
		{GitHub, "issue_comment_created_on_pull_request", []string{"comment"}, "body",
			strings.Repeat("é", 1000), strings.Repeat("é", MaxComment/2)},
		{Gitea, "pull_request_comment_created", []string{"comment"}, "body",
			strings.Repeat("a", MaxComment-1) + "€ and more", strings.Repeat("a", MaxComment-1)},
		{GitLab, "note_on_merge_request", []string{"object_attributes"}, "note",
			strings.Repeat("a", MaxComment-2) + "😀", strings.Repeat("a", MaxComment-2)},
		{GitLab, "note_on_merge_request", []string{"object_attributes"}, "note",
			strings.Repeat("b", MaxComment), strings.Repeat("b", MaxComment)},
	} {
		t.Run(string(c.forge), func(t *testing.T) {
			h, body := loadDelivery(t, c.forge, c.name)
			b := editedBody(t, body, func(m map[string]any) { jsonMember(m, c.path...)[c.field] = c.text })
			ev, err := Parse(c.forge, h, b)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Comment != c.want || len(ev.Comment) > MaxComment || !utf8.ValidString(ev.Comment) {
				t.Errorf("the comment is kept as %d bytes %q..., want %d bytes", len(ev.Comment), cutDeliveryText(ev.Comment, 20), len(c.want))
			}
		})
	}
}

func TestADeliveryWithoutItsIdIsRefused(t *testing.T) {
	for _, c := range []struct {
		forge Type
		name  string
		ids   []string
	}{
		{Gitea, "pull_request_opened", []string{"X-Gitea-Delivery"}},
		{GitHub, "pull_request_opened", []string{"X-GitHub-Delivery"}},
		{GitLab, "merge_request_open", gitlabDeliveryIDs},
	} {
		t.Run(string(c.forge), func(t *testing.T) {
			h, body := loadDelivery(t, c.forge, c.name)
			for _, k := range c.ids {
				h.Del(k)
			}
			refusedParse(t, c.forge, h, body, "no "+c.ids[0])
		})
	}
}

func TestADeliveryIdThatIsNotPlainTextIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	h.Set("X-GitHub-Delivery", "72d3162e\x00cc78")
	refusedParse(t, GitHub, h, body, "printable ASCII")
	h.Set("X-GitHub-Delivery", strings.Repeat("a", maxHeaderText+1))
	refusedParse(t, GitHub, h, body, "printable ASCII")
	h.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	h.Add("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0000")
	refusedParse(t, GitHub, h, body, "2 times")
}

func TestAGitLabDeliveryIsKnownByItsSignedIdFirst(t *testing.T) {
	h, body := loadDelivery(t, GitLab, "merge_request_open")
	h.Del("Idempotency-Key")
	ev, err := Parse(GitLab, h, body)
	if err != nil || ev.DeliveryID != h.Get("X-Gitlab-Webhook-Uuid") {
		t.Errorf("without Idempotency-Key the id is %q (%v), want X-Gitlab-Webhook-UUID", ev.DeliveryID, err)
	}
	h, body = loadDelivery(t, GitLab, "merge_request_open_signed")
	h.Set("Idempotency-Key", "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0aff")
	refusedParse(t, GitLab, h, body, "differ")
}

func TestAGitLabEventWhoseObjectKindDisagreesIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitLab, "merge_request_open")
	h.Set("X-Gitlab-Event", "Note Hook")
	refusedParse(t, GitLab, h, body, "object_kind")
	h, body = loadDelivery(t, GitLab, "note_on_merge_request")
	h.Set("X-Gitlab-Event", "Merge Request Hook")
	refusedParse(t, GitLab, h, body, "object_kind")
	refusedParse(t, GitLab, h, editedBody(t, body, func(m map[string]any) {
		m["object_kind"] = "merge_request"
		m["object_attributes"] = "open"
	}), "not an object")
}

func TestUnknownEventsAndActionsAreIgnoredNotRefused(t *testing.T) {
	for _, c := range []struct {
		forge  Type
		name   string
		header string
		event  string
		action []string
	}{
		{Gitea, "pull_request_opened", "X-Gitea-Event-Type", "pull_request_review_approved", nil},
		{Gitea, "pull_request_opened", "", "", []string{"action", "assigned"}},
		{Gitea, "pull_request_comment_created", "", "", []string{"action", "edited"}},
		{GitHub, "pull_request_opened", "X-GitHub-Event", "check_suite", nil},
		{GitHub, "pull_request_opened", "", "", []string{"action", "ready_for_review"}},
		{GitHub, "issue_comment_created_on_pull_request", "", "", []string{"action", "deleted"}},
		{GitLab, "merge_request_open", "X-Gitlab-Event", "Pipeline Hook", nil},
		{GitLab, "merge_request_open", "", "", []string{"object_attributes", "approved"}},
		{GitLab, "note_on_merge_request", "", "", []string{"object_attributes", "update"}},
	} {
		t.Run(string(c.forge)+"/"+c.event+strings.Join(c.action, "."), func(t *testing.T) {
			h, body := loadDelivery(t, c.forge, c.name)
			if c.header != "" {
				h.Set(c.header, c.event)
			}
			if c.action != nil {
				body = editedBody(t, body, func(m map[string]any) {
					if c.action[0] == "action" {
						m["action"] = c.action[1]
					} else {
						jsonMember(m, c.action[0])["action"] = c.action[1]
					}
				})
			}
			ev, err := Parse(c.forge, h, body)
			if err != nil || ev.Kind != KindIgnored {
				t.Errorf("Parse = %v, %v; want KindIgnored", ev.Kind, err)
			}
		})
	}
}

func TestAGiteaPushOntoItselfIsTheTestDeliveryAndOtherPushesAreIgnored(t *testing.T) {
	h, body := loadDelivery(t, Gitea, "push_test")
	real := editedBody(t, body, func(m map[string]any) { m["after"] = giteaPushed })
	ev, err := Parse(Gitea, h, real)
	if err != nil || ev.Kind != KindIgnored {
		t.Errorf("a real push reads as %v (%v), want KindIgnored", ev.Kind, err)
	}
}
