package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "data", "switchtender.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newRun(t testing.TB, db *DB, template string) Run {
	t.Helper()
	r := Run{Template: template, Project: "infra", Tool: "opentofu", Command: "net", Queue: "default", Kind: "apply", Status: "queued"}
	if err := db.CreateRun(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCreateGetListOrder(t *testing.T) {
	db := openTemp(t)
	for i := 1; i <= 25; i++ {
		r := newRun(t, db, fmt.Sprintf("t%d", i))
		if r.ID != strconv.Itoa(i) {
			t.Fatalf("run %d got ID %q", i, r.ID)
		}
		if r.ExitCode != -1 || r.CreatedAt.IsZero() {
			t.Fatalf("new run: ExitCode %d CreatedAt %v", r.ExitCode, r.CreatedAt)
		}
	}
	runs, err := db.ListRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 25 {
		t.Fatalf("listed %d runs, want 25", len(runs))
	}
	for i, r := range runs {
		if want := strconv.Itoa(25 - i); r.ID != want || r.Template != "t"+want {
			t.Fatalf("position %d: run %s (%s), want %s (numeric order, newest first)", i, r.ID, r.Template, want)
		}
	}
	got, err := db.GetRun("10")
	if err != nil || got.Template != "t10" || got.Project != "infra" {
		t.Fatalf("GetRun(10) = %+v, %v", got, err)
	}
	for _, id := range []string{"26", "0", "010", "-1", "x", ""} {
		if _, err := db.GetRun(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetRun(%q) = %v, want ErrNotFound", id, err)
		}
	}
	r := Run{ID: "5"}
	if err := db.CreateRun(&r); err == nil {
		t.Fatal("CreateRun accepted a preset ID")
	}
}

func TestRunRoundTripAllFields(t *testing.T) {
	db := openTemp(t)
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	in := Run{
		Template: "network", Project: "infra", Tool: "terraform", Command: "infra/network", Queue: "eu",
		Kind: "reconcile", Requester: "deploy-bot", RequesterKind: "agent", RequireApproval: true, AIProposal: true,
		ReconcileOf: "3", Vars: map[string]string{"region": "eu-west-1"}, SecretVars: []string{"db_password"},
		SealedVars: []byte{0, 1, 2, 255}, Status: "held", Message: "held by rule prod", ExitCode: 2,
		CreatedAt: at, StartedAt: at.Add(time.Second), FinishedAt: at.Add(time.Minute),
		Proposal: &Proposal{Digest: "sha256:" + strings.Repeat("ab", 32), Add: 1, Change: 2, Destroy: 3, Replace: 1, Forget: 1,
			Addresses: map[string][]string{"delete": {"terraform_data.a"}},
			Holds:     []Hold{{Rule: "prod", Reason: "require_approval", Approvers: []string{"alice"}}},
			Refusals:  []Hold{{Rule: "r", Reason: "no"}}, Findings: []Finding{{Address: "data.external.x", Reason: "runs a program"}},
			PlanText: "Plan: 1 to add", Requested: "deploy-bot asked", Lineage: "lin", Serial: 7, Stage: "plan", CreatedAt: at, Used: true},
		Approvals: []Approval{{By: "alice", Digest: "sha256:x", Stage: "plan", Decision: "approve", Reason: "ok", At: at}},
		Steps:     []Step{{Name: "init", ExitCode: 0, Started: at, Finished: at}},
	}
	if err := db.CreateRun(&in); err != nil {
		t.Fatal(err)
	}
	out, err := db.GetRun(in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip differs:\n in %+v\nout %+v", in, out)
	}
}

func TestUpdateRunAtomic(t *testing.T) {
	db := openTemp(t)
	r := newRun(t, db, "net")

	boom := errors.New("boom")
	_, err := db.UpdateRun(r.ID, func(r *Run) error {
		r.Status = "running"
		r.Message = "half done"
		return fmt.Errorf("step: %w", boom)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("fn error not returned: %v", err)
	}
	got, _ := db.GetRun(r.ID)
	if got.Status != "queued" || got.Message != "" {
		t.Fatalf("failed fn changed the run: %+v", got)
	}
	if _, err := db.UpdateRun("99", func(*Run) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateRun(missing) = %v", err)
	}
	if _, err := db.UpdateRun(r.ID, func(r *Run) error { r.ID = "2"; return nil }); err == nil {
		t.Fatal("UpdateRun let fn change the ID")
	}

	// 20 concurrent read-modify-writes: none lost.
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := db.UpdateRun(r.ID, func(r *Run) error {
				r.Steps = append(r.Steps, Step{Name: fmt.Sprintf("s%d", i), ExitCode: len(r.Steps)})
				return nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _ = db.GetRun(r.ID)
	if len(got.Steps) != n {
		t.Fatalf("%d steps after %d concurrent appends", len(got.Steps), n)
	}
	seen := map[string]bool{}
	for i, s := range got.Steps {
		if s.ExitCode != i {
			t.Fatalf("step %d saw %d earlier steps: an update read a stale run", i, s.ExitCode)
		}
		seen[s.Name] = true
	}
	if len(seen) != n {
		t.Fatalf("only %d distinct steps", len(seen))
	}
}

func TestLogs(t *testing.T) {
	db := openTemp(t)
	r := newRun(t, db, "net")
	other := newRun(t, db, "other")

	if _, err := db.AppendLog("42", []byte("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("AppendLog to a missing run: %v", err)
	}
	if n, err := db.LogSize(r.ID); n != 0 || err != nil {
		t.Fatalf("empty log size %d, %v", n, err)
	}
	if c, err := db.ReadLog(r.ID, 0); len(c) != 0 || err != nil {
		t.Fatalf("empty log read %v, %v", c, err)
	}

	var want bytes.Buffer
	for i := range 300 {
		line := []byte(strings.Repeat(string(rune('a'+i%26)), 1+i%37) + "\n")
		off, err := db.AppendLog(r.ID, line)
		if err != nil {
			t.Fatal(err)
		}
		if off != int64(want.Len()) {
			t.Fatalf("append %d at offset %d, want %d", i, off, want.Len())
		}
		want.Write(line)
		if i%3 == 0 {
			db.AppendLog(other.ID, []byte("noise "))
		}
	}
	if off, err := db.AppendLog(r.ID, nil); err != nil || off != int64(want.Len()) {
		t.Fatalf("empty append: %d %v", off, err)
	}
	size, err := db.LogSize(r.ID)
	if err != nil || size != int64(want.Len()) {
		t.Fatalf("LogSize %d, want %d (%v)", size, want.Len(), err)
	}

	read := func(from int64) []byte {
		t.Helper()
		chunks, err := db.ReadLog(r.ID, from)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		next := from
		for _, c := range chunks {
			if c.Offset != next {
				t.Fatalf("from %d: chunk at %d, want %d (gap or overlap)", from, c.Offset, next)
			}
			b.Write(c.Data)
			next += int64(len(c.Data))
		}
		return b.Bytes()
	}
	all := want.Bytes()
	for _, from := range []int64{0, 1, 2, 17, int64(len(all) / 2), int64(len(all) - 1), int64(len(all)), int64(len(all) + 100)} {
		got := read(from)
		var exp []byte
		if from < int64(len(all)) {
			exp = all[from:]
		}
		if !bytes.Equal(got, exp) {
			t.Fatalf("ReadLog from %d: %d bytes, want %d", from, len(got), len(exp))
		}
	}
	// Every offset, exhaustively, against the first few chunks.
	for from := int64(0); from < 200; from++ {
		if !bytes.Equal(read(from), all[from:]) {
			t.Fatalf("ReadLog from %d differs", from)
		}
	}
	if _, err := db.ReadLog(r.ID, -1); err == nil {
		t.Fatal("negative offset accepted")
	}
	// Returned data is the caller's: changing it changes nothing stored.
	c, _ := db.ReadLog(r.ID, 0)
	c[0].Data[0] = '!'
	if got := read(0); got[0] != 'a' {
		t.Fatal("ReadLog returned memory shared with the store")
	}
	if n, _ := db.LogSize(other.ID); n != 100*6 {
		t.Fatalf("other run's log size %d, want 600", n)
	}
}

func TestBlobs(t *testing.T) {
	db := openTemp(t)
	if _, err := db.GetBlob("plan", "1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing blob: %v", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.PutBlob("plan", "1", []byte("sealed-1")))
	must(db.PutBlob("plan", "10", []byte("sealed-10")))
	must(db.PutBlob("drift", "infra/net", []byte("kept")))
	must(db.PutBlob("plan", "1", []byte("sealed-1b")))
	must(db.PutBlob("planx", "1", []byte("other kind")))

	if b, err := db.GetBlob("plan", "1"); err != nil || string(b) != "sealed-1b" {
		t.Fatalf("GetBlob = %q %v", b, err)
	}
	keys, err := db.ListBlobs("plan")
	if err != nil || strings.Join(keys, ",") != "1,10" {
		t.Fatalf("ListBlobs(plan) = %v %v", keys, err)
	}
	must(db.DeleteBlob("plan", "1"))
	must(db.DeleteBlob("plan", "1"))
	if _, err := db.GetBlob("plan", "1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted blob: %v", err)
	}
	if keys, _ := db.ListBlobs("drift"); strings.Join(keys, ",") != "infra/net" {
		t.Fatalf("ListBlobs(drift) = %v", keys)
	}
	for _, bad := range [][2]string{{"", "k"}, {"plan", ""}, {"a\x00b", "k"}} {
		if err := db.PutBlob(bad[0], bad[1], []byte("x")); err == nil {
			t.Errorf("PutBlob(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestAudit(t *testing.T) {
	db := openTemp(t)
	for i := range 12 {
		run := []string{"1", "11", ""}[i%3]
		if err := db.Audit(AuditEvent{RunID: run, Actor: "alice", Action: fmt.Sprintf("a%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := db.AuditLog("1")
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, e := range ev {
		if e.RunID != "1" || e.At.IsZero() {
			t.Fatalf("bad event %+v", e)
		}
		acts = append(acts, e.Action)
	}
	if strings.Join(acts, ",") != "a0,a3,a6,a9" {
		t.Fatalf("AuditLog(1) = %v, want a0,a3,a6,a9 in order", acts)
	}
	if ev, _ := db.AuditLog(""); len(ev) != 4 {
		t.Fatalf("server-level events: %d, want 4", len(ev))
	}
	if ev, _ := db.AuditLog("2"); len(ev) != 0 {
		t.Fatalf("events of run 2: %v", ev)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "st.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		newRun(t, db, "net")
	}
	if _, err := db.UpdateRun("2", func(r *Run) error {
		r.Status = "held"
		r.Proposal = &Proposal{Digest: "sha256:abc", Stage: "plan"}
		r.Approvals = append(r.Approvals, Approval{By: "bob", Decision: "approve", Digest: "sha256:abc"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.AppendLog("2", []byte("hello "))
	db.AppendLog("2", []byte("world"))
	db.PutBlob("plan", "2", []byte("sealed"))
	db.Audit(AuditEvent{RunID: "2", Actor: "bob", Action: "approve"})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Path() != path {
		t.Fatalf("Path() = %s", db.Path())
	}
	r, err := db.GetRun("2")
	if err != nil || r.Status != "held" || r.Proposal == nil || r.Proposal.Digest != "sha256:abc" || len(r.Approvals) != 1 {
		t.Fatalf("run after reopen: %+v %v", r, err)
	}
	c, _ := db.ReadLog("2", 0)
	if len(c) != 2 || string(c[0].Data)+string(c[1].Data) != "hello world" {
		t.Fatalf("log after reopen: %v", c)
	}
	if b, _ := db.GetBlob("plan", "2"); string(b) != "sealed" {
		t.Fatal("blob lost")
	}
	if ev, _ := db.AuditLog("2"); len(ev) != 1 {
		t.Fatal("audit lost")
	}
	// The sequence continues after reopen: no ID reused.
	if nr := newRun(t, db, "net"); nr.ID != "4" {
		t.Fatalf("next run after reopen got ID %s, want 4", nr.ID)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("database file mode %04o, want 0600", st.Mode().Perm())
	}
}

func TestSecondOpenFailsLocked(t *testing.T) {
	db := openTemp(t)
	start := time.Now()
	db2, err := Open(db.Path())
	if err == nil {
		db2.Close()
		t.Fatal("second Open of a file in use succeeded")
	}
	// bbolt polls the lock every 50ms until the deadline: allow one poll early.
	if waited := time.Since(start); waited < OpenTimeout-100*time.Millisecond {
		t.Fatalf("gave up after %s, before the %s timeout", waited, OpenTimeout)
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), db.Path()) || !strings.Contains(err.Error(), "another switchtender") {
		t.Fatalf("error %q: want ErrLocked naming the file and the likely cause", err)
	}
	// The first handle still works.
	newRun(t, db, "net")
}

func TestCreateRunFunc(t *testing.T) {
	db := openTemp(t)
	r := Run{Template: "net"}
	err := db.CreateRunFunc(&r, func(r *Run) error {
		r.SealedVars = []byte("sealed for run " + r.ID)
		return nil
	})
	if err != nil || r.ID != "1" || string(r.SealedVars) != "sealed for run 1" {
		t.Fatalf("CreateRunFunc: %+v %v", r, err)
	}
	if got, _ := db.GetRun("1"); string(got.SealedVars) != "sealed for run 1" {
		t.Fatalf("stored SealedVars %q", got.SealedVars)
	}
	boom := errors.New("boom")
	r2 := Run{Template: "net"}
	if err := db.CreateRunFunc(&r2, func(*Run) error { return boom }); !errors.Is(err, boom) || r2.ID != "" {
		t.Fatalf("failing fn: %v, ID %q", err, r2.ID)
	}
	if runs, _ := db.ListRuns(); len(runs) != 1 {
		t.Fatalf("failing fn stored a run: %d runs", len(runs))
	}
	if err := db.CreateRun(&r2); err != nil || r2.ID != "2" {
		t.Fatalf("after a failed create: ID %q %v, want 2", r2.ID, err)
	}
}
