package forge

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The world every fake forge describes (testdata/api/README.md).
const (
	testRepo  = "octocat/Hello-World"
	testToken = "tok-5w1tch-7e4d3r-0123456789abcdef"
	testSelf  = "switchtender-bot"
	headSHA   = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
)

// dialect is one forge as its fake answers and as the cases check its
// calls: each operation's wire form is "METHOD escaped-path".
type dialect struct {
	typ           Type
	authHeader    string // the request header the token travels in
	authValue     string // its value for testToken
	routes        []route
	status        string // posting a status on headSHA
	contextField  string // the status body's field naming the status
	states        map[State]string
	selfCall      string
	listComments  func(number int) string
	createComment func(number int) string
	editComment   func(number int, id int64) string
}

// dialects are the three forges the conformance table runs against.
func dialects() []dialect { return []dialect{giteaDialect(), githubDialect(), gitlabDialect()} }

// forgeCase is one behaviour every Client has alike. run drives the client
// against d's fake and checks what it returns and what it sent.
type forgeCase struct {
	name string
	run  func(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge)
	// failing cases set the fake refusing everything: their calls are not
	// checked for routes.
	failing bool
}

var forgeCases = []forgeCase{
	{name: "AStatusCarriesTheForgesWordForItsStateAndADescriptionCutOnARune", run: statusCase},
	{name: "ACommentIsCreatedThenEditedInPlaceWhenItsIDIsGiven", run: createThenEditCase},
	{name: "AfterARestartTheCommentIsFoundByItsMarkerNotWrittenTwice", run: restartCase},
	{name: "ACommentWhoseIDIsGoneIsFoundByItsMarker", run: goneIDCase},
	{name: "OpenPullRequestsAreListedWithHeadsAuthorsAndForks", run: openCase},
	{name: "PullRequestsMergedSinceATimeAreListedNewestMergeFirst", run: mergedCase},
	{name: "CanPushSaysYesToWriteAccessAndNoToLess", run: canPushCase},
	{name: "SelfIsTheTokensLoginAskedOnce", run: selfCase},
	{name: "BadArgumentsAreRefusedBeforeAnythingIsSent", run: badArgumentsCase},
	{name: "TheTokenIsNeverInAnError", run: tokenCase, failing: true},
}

// TestForgeClientsBehaveAlike runs every forgeCase against Gitea, GitHub
// and GitLab, each on a fake of its own, and checks that every call the
// client made carried the token in the forge's header and was one the
// forge's recording answers.
func TestForgeClientsBehaveAlike(t *testing.T) {
	t.Parallel()
	for _, d := range dialects() {
		for _, fc := range forgeCases {
			t.Run(string(d.typ)+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				f := newFakeForge(t, d.authHeader, d.routes)
				c, err := New(d.typ, f.srv.URL, testToken, f.srv.Client())
				if err != nil {
					t.Fatalf("New(%s): %v", d.typ, err)
				}
				fc.run(t, t.Context(), d, c, f)
				for _, call := range f.all() {
					if call.Auth != d.authValue {
						t.Errorf("%s carried %s %q, want %q", call, d.authHeader, call.Auth, d.authValue)
					}
					if !fc.failing && !call.Routed {
						t.Errorf("%s is no call the forge's recording answers", call)
					}
				}
			})
		}
	}
}

// statusCase posts each state with a description longer than
// MaxDescription whose 140th byte is inside a rune.
func statusCase(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge) {
	long := strings.Repeat("a", MaxDescription-1) + "é and more" // é is bytes 140 and 141
	wantDesc := strings.Repeat("a", MaxDescription-1)
	order := []State{StatePending, StateSuccess, StateFailure, StateSuperseded}
	for _, s := range order {
		st := Status{Context: "switchtender/plan/network", State: s, Description: long, TargetURL: "https://switchtender.example.com/runs/42"}
		if err := c.SetStatus(ctx, testRepo, headSHA, st); err != nil {
			t.Fatalf("SetStatus(%s): %v", s, err)
		}
	}
	calls := f.callsTo(d.status)
	if len(calls) != len(order) {
		t.Fatalf("%d calls to %s, want %d: %v", len(calls), d.status, len(order), f.all())
	}
	for i, s := range order {
		want := map[string]string{"state": d.states[s], d.contextField: "switchtender/plan/network", "description": wantDesc, "target_url": "https://switchtender.example.com/runs/42"}
		for field, v := range want {
			if got := calls[i].Body[field]; got != v {
				t.Errorf("status %s: body %s = %v, want %q", s, field, got, v)
			}
		}
	}
}

// body is a comment body as Switchtender writes one.
func body(text string) string { return CommentMarker + "\n" + text }

func createThenEditCase(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge) {
	id, err := c.UpsertComment(ctx, testRepo, 1348, 0, body("Planning…"))
	if err != nil || id != 2001 {
		t.Fatalf("UpsertComment(1348, 0) = %d, %v; want the created comment 2001", id, err)
	}
	again, err := c.UpsertComment(ctx, testRepo, 1348, id, body("Planned: 1 to add."))
	if err != nil || again != 2001 {
		t.Fatalf("UpsertComment(1348, 2001) = %d, %v; want 2001 edited", again, err)
	}
	creates := f.callsTo(d.createComment(1348))
	if len(creates) != 1 || creates[0].Body["body"] != body("Planning…") {
		t.Errorf("creates = %v, want one with the first body", creates)
	}
	edits := f.callsTo(d.editComment(1348, 2001))
	if len(edits) != 1 || edits[0].Body["body"] != body("Planned: 1 to add.") {
		t.Errorf("edits of 2001 = %v, want one with the second body", edits)
	}
	if lists := f.callsTo(d.listComments(1348)); len(lists) != 1 {
		t.Errorf("the comments were listed %d times, want once (before creating; not when the id is known)", len(lists))
	}
}

// restartCase: pull request 1347 holds, on its first page, a comment by
// someone else that starts with the marker, and Switchtender's own on the
// second.
func restartCase(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge) {
	id, err := c.UpsertComment(ctx, testRepo, 1347, 0, body("Planned: no changes."))
	if err != nil || id != 1003 {
		t.Fatalf("UpsertComment(1347, 0) = %d, %v; want Switchtender's own comment 1003", id, err)
	}
	if lists := f.callsTo(d.listComments(1347)); len(lists) != 2 {
		t.Errorf("%d pages of comments read, want 2", len(lists))
	}
	if edits := f.callsTo(d.editComment(1347, 1003)); len(edits) != 1 || edits[0].Body["body"] != body("Planned: no changes.") {
		t.Errorf("edits of 1003 = %v, want one with the body", edits)
	}
	if edits := f.callsTo(d.editComment(1347, 1002)); len(edits) != 0 {
		t.Errorf("mallory's comment that starts with the marker was edited: %v", edits)
	}
	if creates := f.callsTo(d.createComment(1347)); len(creates) != 0 {
		t.Errorf("a second comment was created: %v", creates)
	}
}

func goneIDCase(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge) {
	id, err := c.UpsertComment(ctx, testRepo, 1347, 999, body("Planned: no changes."))
	if err != nil || id != 1003 {
		t.Fatalf("UpsertComment(1347, 999) = %d, %v; want 1003 found by its marker", id, err)
	}
	if edits := f.callsTo(d.editComment(1347, 999)); len(edits) != 1 {
		t.Errorf("comment 999 was tried %d times, want once", len(edits))
	}
	if creates := f.callsTo(d.createComment(1347)); len(creates) != 0 {
		t.Errorf("a second comment was created: %v", creates)
	}
}

// prLine is a pull request on one line, times in UTC, for comparing.
func prLine(pr PullRequest) string {
	at := ""
	if !pr.MergedAt.IsZero() {
		at = pr.MergedAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("#%d head=%s %s→%s by %s fork=%v open=%v merged=%v %s by %q at %s",
		pr.Number, pr.HeadSHA, pr.HeadRef, pr.BaseRef, pr.Author, pr.Fork, pr.Open, pr.Merged, pr.MergeSHA, pr.MergedBy, at)
}

// samePullRequests reports got against want, line by line.
func samePullRequests(t *testing.T, got []PullRequest, want []string) {
	t.Helper()
	lines := make([]string, len(got))
	for i, pr := range got {
		lines[i] = prLine(pr)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("pull requests:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func openCase(t *testing.T, ctx context.Context, _ dialect, c Client, _ *fakeForge) {
	prs, err := c.OpenPullRequests(ctx, testRepo)
	if err != nil {
		t.Fatalf("OpenPullRequests: %v", err)
	}
	samePullRequests(t, prs, []string{
		`#1347 head=6dcb09b5b57875f334f61aebed695e2e4193db5e new-topic→master by octocat fork=false open=true merged=false  by "" at `,
		`#1348 head=a5e7c3b9f1d2e4c6b8a0f2e4d6c8b0a2e4f6a8c0 patch-1→master by mona fork=true open=true merged=false  by "" at `,
	})
}

// mergedCase: of the closed pull requests, 1345 was not merged, 1344 was
// merged before the time though updated after it, and 1343 was last
// updated before it, where the list stops (its next page is never read).
func mergedCase(t *testing.T, ctx context.Context, _ dialect, c Client, _ *fakeForge) {
	since := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	prs, err := c.MergedPullRequests(ctx, testRepo, since)
	if err != nil {
		t.Fatalf("MergedPullRequests: %v", err)
	}
	samePullRequests(t, prs, []string{
		`#1341 head=2222222222222222222222222222222222222222 feature-b→master by octocat fork=false open=false merged=true f6ce1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b by "octocat" at 2026-05-02T20:00:00Z`,
		`#1346 head=1111111111111111111111111111111111111111 feature-a→master by octocat fork=false open=false merged=true e5bd3914e2e596debea16f433f57875b5b90bcd6 by "hubot" at 2026-05-02T10:00:00Z`,
	})
}

func canPushCase(t *testing.T, ctx context.Context, _ dialect, c Client, _ *fakeForge) {
	for login, want := range map[string]bool{"octocat": true, "mona": false, "stranger": false} {
		got, err := c.CanPush(ctx, testRepo, login)
		if err != nil || got != want {
			t.Errorf("CanPush(%s) = %v, %v; want %v", login, got, err, want)
		}
	}
}

func selfCase(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge) {
	for range 2 {
		if got, err := c.Self(ctx); err != nil || got != testSelf {
			t.Fatalf("Self = %q, %v; want %q", got, err, testSelf)
		}
	}
	if calls := f.callsTo(d.selfCall); len(calls) != 1 {
		t.Errorf("the token's user was read %d times, want once", len(calls))
	}
	if c.CommentLimit() != CommentLimit {
		t.Errorf("CommentLimit = %d, want %d", c.CommentLimit(), CommentLimit)
	}
}

func badArgumentsCase(t *testing.T, ctx context.Context, _ dialect, c Client, f *fakeForge) {
	ok := Status{Context: "switchtender/plan/network", State: StateSuccess}
	refusals := map[string]error{
		"a repository that is no owner/name": c.SetStatus(ctx, "Hello-World", headSHA, ok),
		"a state Switchtender has not":       c.SetStatus(ctx, testRepo, headSHA, Status{Context: "x", State: "exploded"}),
		"a comment without the marker":       second(c.UpsertComment(ctx, testRepo, 1347, 0, "Planned: no changes.")),
		"a comment over the forge's limit":   second(c.UpsertComment(ctx, testRepo, 1347, 0, body(strings.Repeat("x", CommentLimit)))),
	}
	for what, err := range refusals {
		if err == nil {
			t.Errorf("%s was not refused", what)
		}
	}
	if calls := f.all(); len(calls) != 0 {
		t.Errorf("refused arguments still sent %v", calls)
	}
}

// second returns the error of a call that returns a value and an error.
func second[T any](_ T, err error) error { return err }

// tokenCase makes the fake refuse everything with a message that echoes
// the credentials it was sent: no method's error may hold the token, and
// each names its forge.
func tokenCase(t *testing.T, ctx context.Context, d dialect, c Client, f *fakeForge) {
	f.failWith(http.StatusUnauthorized)
	since := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	errs := map[string]error{
		"SetStatus":             c.SetStatus(ctx, testRepo, headSHA, Status{Context: "switchtender/plan/network", State: StatePending}),
		"UpsertComment with id": second(c.UpsertComment(ctx, testRepo, 1348, 2001, body("x"))),
		"UpsertComment without": second(c.UpsertComment(ctx, testRepo, 1348, 0, body("x"))),
		"OpenPullRequests":      second(c.OpenPullRequests(ctx, testRepo)),
		"MergedPullRequests":    second(c.MergedPullRequests(ctx, testRepo, since)),
		"CanPush":               second(c.CanPush(ctx, testRepo, "octocat")),
		"Self":                  second(c.Self(ctx)),
	}
	for method, err := range errs {
		switch {
		case err == nil:
			t.Errorf("%s: no error from a forge refusing everything", method)
		case strings.Contains(err.Error(), testToken):
			t.Errorf("%s: the error holds the token: %v", method, err)
		case !strings.HasPrefix(err.Error(), string(d.typ)+": "):
			t.Errorf("%s: the error %q does not start with %q", method, err, d.typ+": ")
		}
	}
	if len(f.all()) < len(errs) {
		t.Errorf("%d calls reached the forge, want one at least per method", len(f.all()))
	}
}

// TestAnUnknownForgeTypeIsRefusedNamingTheThree guards New's refusal.
func TestAnUnknownForgeTypeIsRefusedNamingTheThree(t *testing.T) {
	t.Parallel()
	c, err := New("bitbucket", "https://bitbucket.example.com", testToken, nil)
	if err == nil || c != nil {
		t.Fatalf("New(bitbucket) = %v, %v; want an error", c, err)
	}
	for _, name := range []string{"bitbucket", "gitea", "github", "gitlab"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error %q does not name %s", err, name)
		}
	}
}
