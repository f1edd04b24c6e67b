package tui

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// The -update flag rewrites testdata/*.golden. x/exp/golden (imported by
// teatest) registers a flag of that name already; share it then.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden from the current views")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// clock is the fixed time every test renders ages against.
var clock = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const heldDigest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// checkDigest is the plan drift check r-1 kept.
const checkDigest = "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"

type approval struct{ id, digest string }
type rejection struct{ id, reason string }

// fakeBackend is a hand-written Backend: fixed runs and templates, logs fed
// by the test through channels, and a record of every call that changes
// something.
type fakeBackend struct {
	mu        sync.Mutex
	ident     Identity
	runs      []RunSummary
	details   map[string]RunDetail
	logs      map[string]chan LogChunk
	templates []Template
	subs      []chan struct{}

	approveErr   error
	approved     []approval
	cancelErr    error
	cancelled    []string
	rejected     []rejection
	launched     []LaunchRequest
	checked      []string
	launchErr    error
	checkErr     error           // CheckLaunch returns it, when set
	checks       []LaunchRequest // every CheckLaunch request
	rerunErr     error
	reruns       []string
	reconcileErr error
	reconciled   []string // the checks Reconcile was called for
}

var _ Backend = (*fakeBackend)(nil)

func newFake() *fakeBackend {
	f := &fakeBackend{
		ident:   Identity{Name: "alice", CanLaunch: true, CanApprove: true},
		details: map[string]RunDetail{},
		logs:    map[string]chan LogChunk{},
	}
	f.runs = []RunSummary{
		{ID: "r-7", Template: "network", Kind: "apply", Status: "awaiting_approval", Requester: "deploy-bot", Agent: true,
			CreatedAt: clock.Add(-5 * time.Minute), WaitingForMe: true, Message: "plan destroys 2: held for approval"},
		{ID: "r-6", Template: "network", Kind: "plan", Status: "succeeded", Requester: "alice", CreatedAt: clock.Add(-2 * time.Hour)},
		{ID: "r-5", Template: "dns", Kind: "check", Status: "running", Requester: "schedule", CreatedAt: clock.Add(-30 * time.Second)},
		{ID: "r-4", Template: "network", Kind: "apply", Status: "failed", Requester: "bob", CreatedAt: clock.Add(-72 * time.Hour),
			Message: "Saved plan is stale: submit the apply again"},
		{ID: "r-3", Template: "data", Kind: "apply", Status: "stale", Requester: "carol", CreatedAt: clock.Add(-96 * time.Hour),
			Stale: true, Message: "Stale before approval: the state changed after this plan was made"},
	}
	f.details["r-7"] = RunDetail{
		RunSummary: f.runs[0], Project: "infra", Command: "infra/network", Tool: "opentofu",
		Proposal: &Proposal{
			// tofu's arithmetic: 2 to add (new, and web's replacement), 2 to
			// destroy (old_a, and web's replacement).
			Digest: heldDigest, Stage: "plan", Add: 1, Destroy: 2, Replace: 1,
			Addresses: map[string][]string{
				"destroy": {"terraform_data.old_a"},
				"replace": {"terraform_data.web"},
				"add":     {"terraform_data.new"},
			},
			Findings: []Finding{{Address: "module.network.data.external.lookup", Reason: "external data source: runs a program with the run's credentials"}},
			Holds: []Hold{
				{Rule: "few-destroys", Reason: "the plan destroys 2, max_destroy is 0", Approvers: []string{"alice", "carol"}},
				{Rule: "agents", Reason: "an agent's apply waits for a person"},
			},
			Requested: "deploy-bot (agent)",
			PlanText:  "OpenTofu will perform the following actions:\n\n  # terraform_data.old_a will be destroyed\n  - resource \"terraform_data\" \"old_a\" {\n      - id = \"a1\" -> null\n    }\n\nPlan: 2 to add, 0 to change, 2 to destroy.\n",
		},
	}
	f.details["r-6"] = RunDetail{RunSummary: f.runs[1], Project: "infra", Command: "infra/network", Tool: "opentofu"}
	f.details["r-5"] = RunDetail{RunSummary: f.runs[2], Project: "infra", Command: "infra/dns", Tool: "terraform",
		Check: &CheckResult{Reconcile: "not yet: the check has not finished"}}
	f.details["r-4"] = RunDetail{RunSummary: f.runs[3], Project: "infra", Command: "infra/network", Tool: "opentofu", ExitCode: 1}
	f.details["r-3"] = RunDetail{RunSummary: f.runs[4], Project: "infra", Command: "infra/data", Tool: "opentofu",
		Proposal: &Proposal{
			Digest: "sha256:" + strings.Repeat("cd", 32), Stage: "plan", Destroy: 1,
			Addresses: map[string][]string{"destroy": {"terraform_data.server[2]"}},
			Holds:     []Hold{{Rule: "no-destroys", Reason: "the plan destroys 1, max_destroy is 0", Approvers: []string{"bob"}}},
			Requested: "carol (person)",
			Stale:     true,
			StaleReason: "the state changed after this plan was made (it was planned from serial 2; run r-2 left serial 3), " +
				"so it can never apply and nothing was applied. `rerun r-3` plans it afresh with the same answers.",
			NewerRun: "r-5",
		},
	}
	f.addChecks()
	f.templates = []Template{
		{Name: "network", Project: "infra", Command: "infra/network", Tool: "opentofu", Survey: []Field{
			{Name: "region", Type: "string", Description: "Region to deploy into", Default: "eu-west-1", HasDefault: true},
			{Name: "size", Type: "choice", Choices: []string{"small", "medium", "large"}, Default: "medium", HasDefault: true},
			{Name: "api_token", Type: "string", Description: "Token for the API", Sensitive: true},
			{Name: "replicas", Type: "number", Default: "2", HasDefault: true},
		}},
		{Name: "dns", Project: "infra", Command: "infra/dns", Tool: "terraform"},
	}
	return f
}

func (f *fakeBackend) Identity() Identity { return f.ident }

func (f *fakeBackend) Runs(ctx context.Context) ([]RunSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]RunSummary(nil), f.runs...), nil
}

func (f *fakeBackend) WatchRuns(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, s := range f.subs {
			if s == ch {
				f.subs = append(f.subs[:i], f.subs[i+1:]...)
				close(ch)
				return
			}
		}
	}()
	return ch
}

// tick tells every watcher that runs changed.
func (f *fakeBackend) tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		select {
		case s <- struct{}{}:
		default:
		}
	}
}

func (f *fakeBackend) Run(ctx context.Context, id string) (RunDetail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.details[id]
	if !ok {
		return RunDetail{}, errors.New("no run " + id)
	}
	return d, nil
}

// FollowLog hands out the test's channel for the run, or one that only
// closes when ctx ends.
func (f *fakeBackend) FollowLog(ctx context.Context, id string, from int64) (<-chan LogChunk, error) {
	f.mu.Lock()
	ch := f.logs[id]
	f.mu.Unlock()
	if ch != nil {
		return ch, nil
	}
	empty := make(chan LogChunk)
	go func() { <-ctx.Done(); close(empty) }()
	return empty, nil
}

func (f *fakeBackend) Templates(ctx context.Context) ([]Template, error) { return f.templates, nil }

var regionRE = regexp.MustCompile(`^[a-z]+-[a-z]+-[0-9]$`)

func (f *fakeBackend) CheckAnswer(template, field, value string) error {
	f.mu.Lock()
	f.checked = append(f.checked, field+"="+value)
	f.mu.Unlock()
	switch field {
	case "region":
		if !regionRE.MatchString(value) {
			return errors.New("region must look like eu-west-1")
		}
	case "api_token":
		if value == "" {
			return errors.New("api_token is required")
		}
	case "replicas":
		if _, err := strconv.Atoi(value); err != nil {
			return errors.New("replicas must be a whole number")
		}
	}
	return nil
}

// CheckLaunch validates like the server does: every answer given passes
// CheckAnswer, an unknown field is refused, and a field without a default
// needs an answer (a string one a non-empty answer).
func (f *fakeBackend) CheckLaunch(ctx context.Context, req LaunchRequest) error {
	f.mu.Lock()
	f.checks = append(f.checks, req)
	err := f.checkErr
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.validate(req)
}

func (f *fakeBackend) validate(req LaunchRequest) error {
	var t *Template
	for i := range f.templates {
		if f.templates[i].Name == req.Template {
			t = &f.templates[i]
		}
	}
	if t == nil {
		return errors.New("no template " + strconv.Quote(req.Template))
	}
	for name := range req.Answers {
		if !slices.ContainsFunc(t.Survey, func(fd Field) bool { return fd.Name == name }) {
			return &FieldError{Field: name, Message: "template " + t.Name + " has no survey field " + name}
		}
	}
	for _, fd := range t.Survey {
		a, given := req.Answers[fd.Name]
		switch {
		case !given && !fd.HasDefault, given && !fd.HasDefault && fd.Type == "string" && a == "":
			return &FieldError{Field: fd.Name, Message: "survey field " + strconv.Quote(fd.Name) + " needs an answer"}
		case given:
			if err := f.CheckAnswer(t.Name, fd.Name, a); err != nil {
				return &FieldError{Field: fd.Name, Message: err.Error()}
			}
		}
	}
	return nil
}

func (f *fakeBackend) Launch(ctx context.Context, req LaunchRequest) (string, error) {
	if err := f.validate(req); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.launchErr != nil {
		return "", f.launchErr
	}
	f.launched = append(f.launched, req)
	return f.addRun(RunSummary{Template: req.Template, Kind: req.Kind}), nil
}

// addRun adds a queued run as the newest (the caller holds mu) and
// returns its ID: r-8, r-9, ...
func (f *fakeBackend) addRun(s RunSummary) string {
	s.ID = "r-" + strconv.Itoa(8+len(f.launched)+len(f.reruns)+len(f.reconciled)-1)
	s.Status, s.Requester, s.CreatedAt = "queued", "alice", clock
	f.runs = append([]RunSummary{s}, f.runs...)
	f.details[s.ID] = RunDetail{RunSummary: s, Project: "infra", Command: "infra/network", Tool: "opentofu"}
	return s.ID
}

func (f *fakeBackend) Rerun(ctx context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rerunErr != nil {
		return "", f.rerunErr
	}
	old, ok := f.details[id]
	if !ok {
		return "", errors.New("no run " + id)
	}
	f.reruns = append(f.reruns, id)
	return f.addRun(RunSummary{Template: old.Template, Kind: old.Kind}), nil
}

func (f *fakeBackend) Approve(ctx context.Context, id, digest string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.approveErr != nil {
		return f.approveErr
	}
	f.approved = append(f.approved, approval{id, digest})
	return nil
}

func (f *fakeBackend) Reject(ctx context.Context, id, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rejected = append(f.rejected, rejection{id, reason})
	return nil
}

func (f *fakeBackend) Cancel(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancelErr != nil {
		return f.cancelErr
	}
	f.cancelled = append(f.cancelled, id)
	return nil
}

// addChecks adds two drift checks of data, the oldest runs: r-1 found
// drift and kept its plan (a reconcile can be proposed), r-0 found drift
// too but r-1 superseded it. Statuses, exit codes and messages are the
// server's.
func (f *fakeBackend) addChecks() {
	found := "Drift found: 1 changed outside OpenTofu, and applying the configuration would make 0 to add, 1 to change, 2 to destroy. " +
		"The plan " + checkDigest + " is kept, sealed: `reconcile r-1` proposes applying exactly that plan."
	r1 := RunSummary{ID: "r-1", Template: "data", Kind: "check", Status: "succeeded", Requester: "alice",
		CreatedAt: clock.Add(-100 * time.Hour), Message: found}
	r0 := RunSummary{ID: "r-0", Template: "data", Kind: "check", Status: "succeeded", Requester: "schedule",
		CreatedAt: clock.Add(-120 * time.Hour), Message: strings.ReplaceAll(found, "r-1", "r-0")}
	f.runs = append(f.runs, r1, r0)
	check := CheckResult{
		Finished: true, Drifted: true, CheckedAt: clock.Add(-100*time.Hour + 40*time.Second),
		Drift: []ResourceDiff{{Address: "terraform_data.server[1]", Action: "update", Attributes: []string{"input", "triggers_replace"}}},
		Changes: []ResourceDiff{
			{Address: "terraform_data.server[1]", Action: "update", Attributes: []string{"input"}},
			{Address: "terraform_data.server[3]", Action: "delete"},
			{Address: "terraform_data.server[4]", Action: "delete"},
		},
		Digest: checkDigest, Change: 1, Destroy: 2,
		Holds:        []Hold{{Rule: "no-destroys", Reason: "the plan destroys 2, max_destroy is 0"}},
		PlanText:     "OpenTofu will perform the following actions:\n\n  # terraform_data.server[3] will be destroyed\n\nPlan: 0 to add, 1 to change, 2 to destroy.\n",
		Reconcilable: true,
		Reconcile:    "can be proposed: `reconcile r-1` proposes applying exactly this plan",
	}
	old := check
	old.CheckedAt, old.Digest = clock.Add(-120*time.Hour+35*time.Second), "sha256:"+strings.Repeat("ab", 32)
	old.SupersededBy, old.Reconcilable = "r-1", false
	old.Reconcile = "cannot be proposed: superseded by check r-1, which dropped this plan"
	f.details["r-1"] = RunDetail{RunSummary: r1, Project: "infra", Command: "infra/data", Tool: "opentofu", ExitCode: 2, Check: &check}
	f.details["r-0"] = RunDetail{RunSummary: r0, Project: "infra", Command: "infra/data", Tool: "opentofu", ExitCode: 2, Check: &old}
}

// Reconcile proposes the reconcile of check id as the server does: refused
// with the server's sentence unless the check can be reconciled; otherwise
// a held reconcile run carrying the check's digest, and the check is
// marked reconciled.
func (f *fakeBackend) Reconcile(ctx context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reconcileErr != nil {
		return "", f.reconcileErr
	}
	d, ok := f.details[id]
	switch {
	case !ok:
		return "", errors.New("no run \"" + id + "\"; `runs` lists them")
	case d.Check == nil:
		return "", errors.New("run " + id + " is not a drift check")
	case !d.Check.Reconcilable:
		return "", errors.New("check " + id + " " + d.Check.Reconcile)
	}
	f.reconciled = append(f.reconciled, id)
	nid := f.addRun(RunSummary{Template: d.Template, Kind: "reconcile"})
	f.heldReconcile(nid, d)
	c := *d.Check
	c.ReconciledBy, c.Reconcilable, c.Reconcile = nid, false, "cannot be proposed again: reconciled by run "+nid
	d.Check = &c
	f.details[id] = d
	return nid, nil
}

// heldReconcile makes run nid the held reconcile of check (the caller
// holds mu).
func (f *fakeBackend) heldReconcile(nid string, check RunDetail) {
	r := f.details[nid]
	c := check.Check
	r.Status, r.WaitingForMe, r.Command = "awaiting_approval", true, check.Command
	r.Message = "Held for approval: a reconcile carries the plan check " + check.ID + " kept (0 to add, 1 to change, 2 to destroy); " +
		"a person releases exactly that plan with: approve " + nid + " --digest " + c.Digest
	r.Proposal = &Proposal{
		Digest: c.Digest, Stage: "plan", Change: c.Change, Destroy: c.Destroy,
		Addresses: map[string][]string{"destroy": {"terraform_data.server[3]", "terraform_data.server[4]"}, "change": {"terraform_data.server[1]"}},
		Holds: append([]Hold{{Rule: "reconcile", Reason: "a reconcile carries the plan check " + check.ID + " kept; a person releases it"}},
			c.Holds...),
		Requested: "alice (person), a reconcile of check " + check.ID, PlanText: c.PlanText,
	}
	f.details[nid] = r
	f.runs[0] = r.RunSummary
}

// --- driver ---

// driver runs a model the way a tea.Program does, but deterministically
// from the test: commands run in goroutines, their messages are queued, and
// waitFor feeds them to Update one at a time until the screen shows what
// the test expects. Messages of other packages (cursor blinks) are dropped.
type driver struct {
	t    *testing.T
	m    tea.Model
	msgs chan tea.Msg
	done chan struct{}
	quit bool
}

func newDriver(t *testing.T, b Backend, opts Options) *driver {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return clock }
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts.Context = ctx
	d := &driver{t: t, m: New(b, opts), msgs: make(chan tea.Msg, 1024), done: make(chan struct{})}
	t.Cleanup(func() { cancel(); close(d.done) })
	d.run(d.m.Init())
	return d
}

var tuiPkg = reflect.TypeOf(model{}).PkgPath()

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				d.run(c)
			}
			return
		}
		if msg == nil {
			return
		}
		select {
		case d.msgs <- msg:
		case <-d.done:
		}
	}()
}

func (d *driver) send(msg tea.Msg) {
	m, cmd := d.m.Update(msg)
	d.m = m
	d.run(cmd)
}

func (d *driver) root() *model { return d.m.(*model) }

// view is the screen as text, with styling escape sequences removed.
func (d *driver) view() string { return stripANSI(d.m.View().Content) }

// waitFor processes messages until cond holds for the screen.
func (d *driver) waitFor(what string, cond func(screen string) bool) {
	d.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond(d.view()) {
		select {
		case msg := <-d.msgs:
			if _, ok := msg.(tea.QuitMsg); ok {
				d.quit = true
				continue
			}
			t := reflect.TypeOf(msg)
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.PkgPath() != tuiPkg {
				continue
			}
			d.send(msg)
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s; screen:\n%s", what, d.view())
		}
	}
}

func (d *driver) waitText(s string) {
	d.t.Helper()
	d.waitFor(strconv.Quote(s), func(v string) bool { return strings.Contains(v, s) })
}

// settle processes messages until none arrives for a short while.
func (d *driver) settle() {
	for {
		select {
		case msg := <-d.msgs:
			if _, ok := msg.(tea.QuitMsg); ok {
				d.quit = true
				continue
			}
			t := reflect.TypeOf(msg)
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.PkgPath() == tuiPkg {
				d.send(msg)
			}
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

// press sends key presses: names like "enter", "esc", "tab", "shift+tab",
// "up", "ctrl+c", "ctrl+u", or a single character.
func (d *driver) press(keys ...string) {
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

// typeText types s one character at a time.
func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	named := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "end": tea.KeyEnd, "home": tea.KeyHome, "pgup": tea.KeyPgUp,
		"backspace": tea.KeyBackspace,
	}
	switch {
	case k == "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case strings.HasPrefix(k, "ctrl+"):
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	if r, ok := named[k]; ok {
		return tea.KeyPressMsg{Code: r}
	}
	r, _ := utf8.DecodeRuneInString(k)
	return tea.KeyPressMsg{Code: r, Text: k}
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;:?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)`)

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// golden compares got with testdata/name.golden, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run go test -update to create it): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the view (go test -update rewrites it)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func teaWindowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
