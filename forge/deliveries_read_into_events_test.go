package forge

import (
	"bufio"
	"bytes"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testSecrets are the webhook secrets the recorded deliveries are signed
// with (testdata/deliveries/README.md).
var testSecrets = map[Type]string{
	Gitea:  "switchtender-test-secret",
	GitHub: "switchtender-test-secret",
	GitLab: "whsec_c3dpdGNodGVuZGVyLXRlc3Qtc2lnbmluZy1rZXktMzI=",
}

// loadDelivery reads testdata/deliveries/FORGE/NAME.json (the body as
// sent) and NAME.headers (one "Name: value" line per header).
func loadDelivery(t testing.TB, forge Type, name string) (http.Header, []byte) {
	t.Helper()
	dir := filepath.Join("testdata", "deliveries", string(forge))
	body, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".headers"))
	if err != nil {
		t.Fatal(err)
	}
	mime, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(raw, '\n')))).ReadMIMEHeader()
	if err != nil {
		t.Fatalf("%s/%s.headers: %v", forge, name, err)
	}
	return http.Header(mime), body
}

const (
	giteaHead   = "9f2c1d7a0b3e4f5a6b7c8d9e0f1a2b3c4d5e6f70"
	giteaPushed = "c0ffee0123456789abcdef0123456789abcdef01"
	githubHead  = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	gitlabHead  = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"
)

// giteaPR, githubPR and gitlabMR are the pull request every recorded
// delivery of a forge is about, as an Event; a case changes what differs.
var (
	giteaPR = Event{Type: Gitea, Event: "pull_request", Repository: "alice/infra", Number: 3, HeadSHA: giteaHead,
		HeadRef: "add-logs-bucket", BaseRef: "main", DefaultBranch: "main", Author: "alice", Sender: "alice"}
	githubPR = Event{Type: GitHub, Event: "pull_request", Repository: "Codertocat/Hello-World", Number: 2, HeadSHA: githubHead,
		HeadRef: "changes", BaseRef: "master", DefaultBranch: "master", Author: "Codertocat", Sender: "Codertocat"}
	gitlabMR = Event{Type: GitLab, Event: "Merge Request Hook", Action: "open", Kind: KindOpened, Repository: "gitlabhq/gitlab-test",
		Number: 1, HeadSHA: gitlabHead, HeadRef: "ms-viewport", BaseRef: "master", DefaultBranch: "master", Sender: "root"}
)

func recordedWith(ev Event, change func(*Event)) Event {
	change(&ev)
	return ev
}

// recordedEvents is what every recorded delivery reads into, by
// "forge/name".
var recordedEvents = map[string]Event{
	"gitea/pull_request_opened": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a01", "opened", KindOpened
	}),
	"gitea/pull_request_reopened": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind, e.Sender = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a02", "reopened", KindOpened, "bob"
	}),
	"gitea/pull_request_sync": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Event, e.Action, e.Kind = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a03", "pull_request_sync", "synchronized", KindPushed
		e.HeadSHA, e.BeforeSHA, e.Sender = giteaPushed, giteaHead, "bob"
	}),
	"gitea/pull_request_closed_merged": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a04", "closed", KindMerged
		e.HeadSHA, e.MergeSHA, e.Sender = giteaPushed, "e83c5163316f89bfbde7d9ab23ca2e25604af290", "carol"
	}),
	"gitea/pull_request_closed": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind, e.HeadSHA, e.Sender = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a05", "closed", KindClosed, giteaPushed, "bob"
	}),
	"gitea/pull_request_edited": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a06", "edited", KindIgnored
	}),
	"gitea/pull_request_from_fork_opened": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind, e.Number = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a07", "opened", KindOpened, 4
		e.HeadRef, e.Author, e.Sender, e.Fork = "patch-1", "mallory", "mallory", true
	}),
	"gitea/pull_request_comment_created": recordedWith(giteaPR, func(e *Event) {
		e.DeliveryID, e.Event, e.Action, e.Kind = "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a08", "pull_request_comment", "created", KindComment
		e.HeadSHA, e.Sender, e.Comment, e.CommentID = giteaPushed, "bob", "switchtender plan", 9003
	}),
	"gitea/issue_comment_created": {Type: Gitea, DeliveryID: "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a09", Event: "issue_comment",
		Action: "created", Kind: KindIgnored, Repository: "alice/infra", DefaultBranch: "main", Sender: "bob"},
	"gitea/push_test": {Type: Gitea, DeliveryID: "0b3f2a7e-5c1d-4e8f-9a6b-1c2d3e4f5a10", Event: "push",
		Kind: KindPing, Repository: "alice/infra", DefaultBranch: "main", Sender: "alice"},

	"github/pull_request_opened": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0958", "opened", KindOpened
	}),
	"github/pull_request_reopened": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0959", "reopened", KindOpened
	}),
	"github/pull_request_synchronize": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0960", "synchronize", KindPushed
		e.BeforeSHA = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	}),
	// merge_commit_sha names GitHub's test merge before a merge: not kept.
	"github/pull_request_closed": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0961", "closed", KindClosed
	}),
	"github/pull_request_closed_merged": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0962", "closed", KindMerged
		e.MergeSHA = "c4295bd74fb0f4fda03689c3df3f2803b658fd85"
	}),
	"github/pull_request_labeled": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0963", "labeled", KindIgnored
	}),
	"github/pull_request_from_fork_opened": recordedWith(githubPR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "72d3162e-cc78-11e3-81ab-4c9367dc0964", "opened", KindOpened
		e.HeadRef, e.Author, e.Sender, e.Fork = "patch-1", "Octocat-fork", "Octocat-fork", true
	}),
	"github/issue_comment_created_on_issue": {Type: GitHub, DeliveryID: "72d3162e-cc78-11e3-81ab-4c9367dc0965", Event: "issue_comment",
		Action: "created", Kind: KindIgnored, Repository: "Codertocat/Hello-World", DefaultBranch: "master", Sender: "Codertocat"},
	// GitHub's comment payload names no head: Fork is true until looked up.
	"github/issue_comment_created_on_pull_request": {Type: GitHub, DeliveryID: "72d3162e-cc78-11e3-81ab-4c9367dc0966",
		Event: "issue_comment", Action: "created", Kind: KindComment, Repository: "Codertocat/Hello-World", Number: 2,
		DefaultBranch: "master", Author: "Codertocat", Sender: "Codertocat", Fork: true,
		Comment: "switchtender plan", CommentID: 492700400},
	"github/ping": {Type: GitHub, DeliveryID: "72d3162e-cc78-11e3-81ab-4c9367dc0967", Event: "ping", Kind: KindPing,
		Repository: "Octocoders/Hello-World", DefaultBranch: "master", Sender: "Codertocat"},

	"gitlab/merge_request_open": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a01"
	}),
	"gitlab/merge_request_open_signed": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a02"
	}),
	"gitlab/merge_request_reopen_by_author": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Action, e.Author, e.Sender = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a03", "reopen", "jsmith", "jsmith"
	}),
	"gitlab/merge_request_update_with_commits": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a04", "update", KindPushed
		e.BeforeSHA = "95790bf891e76fee5e1747ab589903a6a1f80f22"
	}),
	"gitlab/merge_request_update_title": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a05", "update", KindIgnored
	}),
	"gitlab/merge_request_merge": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a06", "merge", KindMerged
		e.MergeSHA = "0b4bc9a49b562e85de7cc9e834518ea6828729b9"
	}),
	"gitlab/merge_request_close": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Action, e.Kind = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a07", "close", KindClosed
	}),
	"gitlab/merge_request_open_from_fork": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Fork = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a08", true
	}),
	// The Test button sends the newest merge request as "open", merged or not.
	"gitlab/merge_request_test_of_a_merged_one": recordedWith(gitlabMR, func(e *Event) {
		e.DeliveryID, e.Kind = "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a09", KindPing
	}),
	"gitlab/note_on_merge_request": {Type: GitLab, DeliveryID: "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a10", Event: "Note Hook",
		Action: "create", Kind: KindComment, Repository: "gitlab-org/gitlab-test", Number: 1,
		HeadSHA: "562e173be03b8ff2efb05345d12df18815438a4b", HeadRef: "master", BaseRef: "markdown", DefaultBranch: "master",
		Sender: "root", Comment: "This MR needs work.", CommentID: 1244},
	"gitlab/note_on_issue": {Type: GitLab, DeliveryID: "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0a11", Event: "Note Hook",
		Action: "create", Kind: KindIgnored, Repository: "gitlab-org/gitlab-test", DefaultBranch: "master", Sender: "root"},
}

func TestEveryRecordedDeliveryIsVerifiedAndReadIntoItsEvent(t *testing.T) {
	for key, want := range recordedEvents {
		t.Run(key, func(t *testing.T) {
			forge, name, _ := strings.Cut(key, "/")
			h, body := loadDelivery(t, Type(forge), name)
			if err := Verify(Type(forge), testSecrets[Type(forge)], h, body); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			got, err := Parse(Type(forge), h, body)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != want {
				t.Errorf("Parse read\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

// TestNoRecordedDeliveryGoesUnread keeps the table and the files in step:
// every body has its headers, every file an expected Event, every
// expected Event a file, and each file stays small.
func TestNoRecordedDeliveryGoesUnread(t *testing.T) {
	var onDisk []string
	for _, forge := range Types {
		dir := filepath.Join("testdata", "deliveries", string(forge))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if info.Size() >= 30<<10 {
				t.Errorf("%s/%s is %d bytes; keep recorded deliveries under 30 KB", forge, e.Name(), info.Size())
			}
			name, ok := strings.CutSuffix(e.Name(), ".json")
			if !ok {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, name+".headers")); err != nil {
				t.Errorf("%s/%s.json has no .headers file", forge, name)
			}
			onDisk = append(onDisk, string(forge)+"/"+name)
		}
	}
	for _, key := range onDisk {
		if _, ok := recordedEvents[key]; !ok {
			t.Errorf("%s is recorded but recordedEvents does not say what it reads into", key)
		}
	}
	if len(onDisk) != len(recordedEvents) {
		var keys []string
		for key := range recordedEvents {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		sort.Strings(onDisk)
		t.Errorf("recordedEvents names %d deliveries, testdata holds %d:\n%v\n%v", len(keys), len(onDisk), keys, onDisk)
	}
}
