package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// The load scenario.
const (
	loadRuns      = 200 // runs launched
	loadDirs      = 20  // working directories, one template each
	loadFollowers = 50  // SSH sessions following a run's log
	loadLaunchers = 8   // SSH clients launching at once
	loadParallel  = 2   // max_parallel (the machine has 2 cores)
	// loadTimeout bounds the whole loaded phase: launches, runs, followers.
	loadTimeout = 5 * time.Minute
	// loadDirectRuns is how many runs the direct baseline executes (the same
	// mix, two at a time), half before the loaded phase and half after.
	loadDirectRuns = 40
)

// loadDir is the name of working directory i (and of its template).
func loadDir(i int) string { return fmt.Sprintf("w%02d", i) }

// loadPlanned says what run k of the scenario is: its directory, whether it
// is a dry run, and its generation (every run replaces the directory's
// resources, so each apply changes state and each plan has work in it).
// Each directory gets five dry runs and five applies, interleaved.
func loadPlanned(k int) (dir int, dry bool, gen string) {
	return k % loadDirs, (k/loadDirs)%2 == 0, strconv.Itoa(k + 1)
}

// BenchmarkLoad is the load check: 200 runs over 20 working directories,
// launched over SSH as fast as the server takes them, while 50 SSH sessions
// follow runs' logs. Run it once:
//
//	go test -run '^$' -bench Load -benchtime 1x ./server/
//
// The scenario runs once per benchmark invocation whatever b.N is (the
// framework's first b.N is 1; -benchtime 1x keeps it there), bounded by
// loadTimeout; all traffic is on 127.0.0.1. The server runs in this process
// with max_parallel = 2 and the SSH limits of its server block raised as
// behind one proxy (ssh_max_connections_per_source 128, ssh_max_startups
// 128, ssh_max_connections 512) so the followers and launchers fit. The project has 20 copies of
// testdata/project/infra/data (three terraform_data resources), one template
// each, no rules: half the runs are dry runs (init, plan) and half ungated
// applies (init, apply -auto-approve), each with a new generation so every
// run replaces the three resources. Eight SSH clients launch the 200 runs,
// a new connection per launch (`launch wNN --var generation=K [--dry-run]
// --json`); 50 connections dialled beforehand each run `log RUN --follow`
// on every fourth run launched (half as soon as its ID is known, half once
// the run is running) and read everything until the command exits.
//
// Metrics:
//
//   - ns/op: the wall time per run through the server (the scenario's wall
//     time over 200), not the benchmark function's time;
//   - runs/min: 200 runs over the wall time from the first launch to the
//     last run's end; launch-s: the time the 200 launches took; launch-p50-ms,
//     launch-p99-ms: one launch, dial to exit status;
//   - ratio: the wall time per run through the server divided by the wall
//     time per run of the same mix run directly by tofu (init then plan -out,
//     or init then apply -auto-approve, in copies of the same directories,
//     with the environment the server builds, two at a time as max_parallel
//     allows, output captured in memory), 20 runs before the loaded phase
//     and 20 after; direct-runs/min is that baseline's rate;
//   - run-ratio: a run's own duration as stored (StartedAt to FinishedAt,
//     median) divided by a direct run's (median): how much slower a run
//     executes under the load; run-p50-ms and direct-run-p50-ms are the two;
//   - peak-rss-MB: the largest VmRSS sampled every 20 ms during the loaded
//     phase; base-rss-MB: VmRSS after the server started and the followers
//     connected; hwm-MB: VmHWM at the end. The server runs in this process,
//     so these include the 58 SSH clients and the benchmark's bookkeeping
//     (not the tofu processes, which are children);
//   - runs-ok: runs that ended exactly once (succeeded, steps init then plan
//     or init then apply, each once and exit 0, one "Initializing the
//     backend" in the log, audit events launch and succeeded once each,
//     never overlapping another run of the same directory, never more than
//     max_parallel at once; the audit chain must verify); logs-ok: followers
//     whose output equals the stored log (as the log command prints it,
//     then the run's final status line) byte for byte and whose command
//     exited 0; queued-follows and running-follows: followers whose session started while their run was
//     queued (the even ones start as soon as the ID is known) or running
//     (the odd ones wait until it runs, joining mid-stream); the rest
//     started after their run had ended.
//
// A check that fails fails the benchmark (b.Errorf) after the metrics.
func BenchmarkLoad(b *testing.B) {
	n := newLoadNode(b)
	binary, err := exec.OpenTofu.Find(envValue(testEnviron, "PATH"))
	if err != nil {
		b.Fatal(err)
	}
	direct := newLoadDirect(b, binary)

	done := false
	for b.Loop() {
		// Once, whatever b.N: the scenario is long (see the doc).
		if done {
			continue
		}
		done = true
		direct.run(b, 0, loadDirectRuns/2) // warm-up and first half of the baseline
		res := n.scenario(b)
		direct.run(b, loadDirectRuns/2, loadDirectRuns)
		n.report(b, res, direct)
	}
}

// loadNode is the control node of the load benchmark.
type loadNode struct {
	dir    string
	srv    *Server
	signer gossh.Signer
}

func newLoadNode(b *testing.B) *loadNode {
	b.Helper()
	dir := b.TempDir()
	n := &loadNode{dir: dir}
	project := filepath.Join(dir, "project")
	var templates strings.Builder
	for i := range loadDirs {
		wd := filepath.Join(project, "infra", loadDir(i))
		if err := os.CopyFS(wd, os.DirFS("testdata/project/infra/data")); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&templates, `template %q {
  project = "infra"
  command = "infra/%s"
  survey "generation" {
    type = "string"
  }
}
`, loadDir(i), loadDir(i))
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	if n.signer, err = gossh.NewSignerFromKey(priv); err != nil {
		b.Fatal(err)
	}
	pub := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(n.signer.PublicKey())))
	// Every client comes from one address, as a team behind one proxy or
	// NAT does: the limits such a deployment sets.
	cfgText := fmt.Sprintf(`server {
  ssh_listen                     = "127.0.0.1:0"
  data_dir                       = %q
  max_parallel                   = %d
  ssh_max_startups               = 128
  ssh_max_connections            = 512
  ssh_max_connections_per_source = 128
}
project "infra" {
  path = %q
}
user "alice" {
  public_key = %q
  roles      = ["launch"]
}
%s`, filepath.Join(dir, "data"), loadParallel, project, pub, templates.String())
	cfgPath := filepath.Join(dir, "switchtender.hcl")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		b.Fatalf("loading the benchmark configuration: %v", err)
	}
	if n.srv, err = New(cfg, Options{Environ: testEnviron}); err != nil {
		b.Fatalf("starting server: %v", err)
	}
	if err := n.srv.startWithDoor(context.Background()); err != nil {
		b.Fatalf("starting server: %v", err)
	}
	b.Cleanup(func() { n.srv.Close() })
	return n
}

func (n *loadNode) dial() (*gossh.Client, error) {
	return gossh.Dial("tcp", n.srv.SSHAddr(), &gossh.ClientConfig{
		User:            "alice",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(n.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         30 * time.Second,
	})
}

// loadFollower is one SSH session following one run.
type loadFollower struct {
	client *gossh.Client
	runID  string
	late   bool   // the session starts once the run is running, not at launch
	status Status // the run's status when the session started
	out    bytes.Buffer
	errOut bytes.Buffer
	err    error
	done   chan struct{} // closed when the command returned
}

// loadResult is what the loaded phase observed.
type loadResult struct {
	wall       time.Duration // first launch to the last run's end
	launchWall time.Duration // first launch to the last launch's exit
	launches   []time.Duration
	ids        []string // by scenario index k
	followers  []*loadFollower
	peakRSS    uint64
	baseRSS    uint64
}

// scenario launches the 200 runs with 50 followers and waits until every
// run ended and every follower returned, or loadTimeout passed.
func (n *loadNode) scenario(b *testing.B) *loadResult {
	b.Helper()
	res := &loadResult{ids: make([]string, loadRuns), launches: make([]time.Duration, loadRuns)}
	deadline := time.Now().Add(loadTimeout)

	// The followers' connections, dialled before the load starts.
	res.followers = make([]*loadFollower, loadFollowers)
	for i := range res.followers {
		c, err := n.dial()
		if err != nil {
			b.Fatalf("follower %d: ssh: %v", i, err)
		}
		res.followers[i] = &loadFollower{client: c, done: make(chan struct{})}
	}
	defer func() {
		for _, f := range res.followers {
			f.client.Close()
		}
	}()
	res.baseRSS = rssBytes()

	// RSS sampler.
	stopRSS := make(chan struct{})
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if r := rssBytes(); r > res.peakRSS {
				res.peakRSS = r
			}
			select {
			case <-stopRSS:
				return
			case <-t.C:
			}
		}
	}()

	// Launches: loadLaunchers clients take the next k as soon as they are
	// free; every fourth run to get its ID gets a follower at once.
	t0 := time.Now()
	var next, launched atomic.Int64
	var launchErr sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for range loadLaunchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= loadRuns || time.Now().After(deadline) {
					return
				}
				id, d, err := n.launch(k)
				if err != nil {
					launchErr.Do(func() { firstErr = err })
					return
				}
				res.ids[k], res.launches[k] = id, d
				if m := int(launched.Add(1) - 1); m%(loadRuns/loadFollowers) == 0 {
					i := m / (loadRuns / loadFollowers)
					n.follow(res.followers[i], id, i%2 == 1, deadline)
				}
			}
		}()
	}
	wg.Wait()
	res.launchWall = time.Since(t0)
	if firstErr != nil {
		close(stopRSS)
		b.Fatalf("launching: %v", firstErr)
	}

	// Every run ends, then every follower returns.
	for {
		runs, err := n.srv.db.ListRuns()
		if err != nil {
			b.Fatal(err)
		}
		active := 0
		var last time.Time
		for _, r := range runs {
			if r.Status.Active() {
				active++
			} else if r.FinishedAt.After(last) {
				last = r.FinishedAt
			}
		}
		if active == 0 {
			res.wall = last.Sub(t0)
			break
		}
		if time.Now().After(deadline) {
			res.wall = time.Since(t0)
			b.Errorf("%d runs still queued or running after %v", active, loadTimeout)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, f := range res.followers {
		if f.runID == "" {
			continue
		}
		select {
		case <-f.done:
		case <-time.After(time.Until(deadline)):
			r, _ := n.srv.db.GetRun(f.runID)
			f.client.Close() // unblocks it; its buffer is read only after done
			<-f.done
			b.Errorf("follower %d of run %s (%s) did not return by the deadline; it had read %d bytes", i, f.runID, r.Status, f.out.Len())
		}
	}
	close(stopRSS)
	<-rssDone
	return res
}

// launch queues scenario run k over a new SSH connection and returns its ID
// and the time from dialling to the command's exit.
func (n *loadNode) launch(k int) (string, time.Duration, error) {
	dir, dry, gen := loadPlanned(k)
	t0 := time.Now()
	client, err := n.dial()
	if err != nil {
		return "", 0, fmt.Errorf("run %d: ssh: %w", k, err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", 0, fmt.Errorf("run %d: ssh session: %w", k, err)
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	args := []string{"launch", loadDir(dir), "--var", "generation=" + gen, "--json"}
	if dry {
		args = append(args, "--dry-run")
	}
	if err := sess.Run(shellJoin(args)); err != nil {
		return "", 0, fmt.Errorf("run %d: %v: %w\nstdout:\n%s\nstderr:\n%s", k, args, err, out.String(), errOut.String())
	}
	d := time.Since(t0)
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.ID == "" {
		return "", 0, fmt.Errorf("run %d: launch printed no run ID (%v):\n%s", k, err, out.String())
	}
	return v.ID, d, nil
}

// follow starts `log ID --follow` on f's connection: at once, or when late
// once the run is running (a follower joining mid-stream).
func (n *loadNode) follow(f *loadFollower, id string, late bool, deadline time.Time) {
	f.runID, f.late = id, late
	go func() {
		defer close(f.done)
		for {
			r, err := n.srv.db.GetRun(id)
			if err != nil {
				f.err = err
				return
			}
			f.status = r.Status
			if !late || f.status != StatusQueued || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		sess, err := f.client.NewSession()
		if err != nil {
			f.err = err
			return
		}
		defer sess.Close()
		sess.Stdout, sess.Stderr = &f.out, &f.errOut
		f.err = sess.Run(shellJoin([]string{"log", id, "--follow"}))
	}()
}

// loadDirect runs the scenario's mix with tofu directly: copies of the
// working directories, the server's environment, two at a time.
type loadDirect struct {
	binary    string
	dir       string
	durations []time.Duration // each run's init plus plan or apply
	wall      time.Duration   // summed over the batches
}

func newLoadDirect(b *testing.B, binary string) *loadDirect {
	d := &loadDirect{binary: binary, dir: b.TempDir()}
	for i := range loadDirs {
		if err := os.CopyFS(filepath.Join(d.dir, loadDir(i)), os.DirFS("testdata/project/infra/data")); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// run executes scenario runs from..to-1 directly, loadParallel at a time,
// never two in one directory (consecutive k are in different directories).
// The first batch also warms up: its first runs are discarded.
func (d *loadDirect) run(b *testing.B, from, to int) {
	b.Helper()
	if from == 0 {
		// Warm-up: one run per worker, not counted.
		for k := range loadParallel {
			d.one(b, k, 1000+k)
		}
		d.durations = []time.Duration{}
	}
	t0 := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int64
	next.Store(int64(from))
	for range loadParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= to {
					return
				}
				dur := d.one(b, k, k)
				mu.Lock()
				d.durations = append(d.durations, dur)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	d.wall += time.Since(t0)
}

// one is scenario run k's work done directly, with generation g.
func (d *loadDirect) one(b *testing.B, k, g int) time.Duration {
	dir, dry, _ := loadPlanned(k)
	wd := filepath.Join(d.dir, loadDir(dir))
	env := exec.BuildEnv(exec.EnvSpec{Base: testEnviron, Vars: map[string]string{"generation": strconv.Itoa(g + 1)}})
	var out bytes.Buffer
	run := func(args ...string) {
		cmd := osexec.Command(d.binary, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = wd, env, &out, &out
		if err := cmd.Run(); err != nil {
			b.Errorf("direct tofu %s in %s: %v\n%s", args[0], wd, err, out.String())
		}
	}
	t0 := time.Now()
	run(exec.InitArgs(true)...)
	if dry {
		run(exec.PlanArgs(filepath.Join(wd, "plan.tfplan"))...)
	} else {
		run(exec.ApplyAutoArgs()...)
	}
	return time.Since(t0)
}

// report checks the store and the followers and reports the metrics.
func (n *loadNode) report(b *testing.B, res *loadResult, direct *loadDirect) {
	runs, err := n.srv.db.ListRuns()
	if err != nil {
		b.Fatal(err)
	}
	if len(runs) != loadRuns {
		b.Errorf("the store holds %d runs; %d were launched", len(runs), loadRuns)
	}
	byID := map[string]store.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	var problems []string
	bad := map[string]bool{}
	problem := func(id, format string, args ...any) {
		bad[id] = true
		problems = append(problems, "run "+id+": "+fmt.Sprintf(format, args...))
	}
	seen := map[string]int{}
	var durations []time.Duration
	for k, id := range res.ids {
		if id == "" {
			continue
		}
		if seen[id]++; seen[id] > 1 {
			problem(id, "launch %d got an ID another launch got too", k)
		}
		r, ok := byID[id]
		if !ok {
			problem(id, "not in the store")
			continue
		}
		dir, dry, gen := loadPlanned(k)
		wantStep := "apply"
		if dry {
			wantStep = "plan"
		}
		if r.Template != loadDir(dir) || (r.Kind == KindPlan) != dry || r.Vars["generation"] != gen {
			problem(id, "is %s of %s with generation %q; launch %d asked for %s (dry %v, generation %s)", r.Kind, r.Template, r.Vars["generation"], k, loadDir(dir), dry, gen)
		}
		if r.Status != StatusSucceeded {
			problem(id, "is %s: %s", r.Status, r.Message)
		}
		var names []string
		for _, s := range r.Steps {
			names = append(names, s.Name)
			if s.ExitCode != 0 {
				problem(id, "step %s exited %d", s.Name, s.ExitCode)
			}
		}
		if !slices.Equal(names, []string{"init", wantStep}) {
			problem(id, "recorded steps %v, want [init %s] once each", names, wantStep)
		}
		log := n.storedLog(b, id)
		if c := bytes.Count(log, []byte("Initializing the backend")); c != 1 {
			problem(id, "its log shows init %d times", c)
		}
		if !r.FinishedAt.After(r.StartedAt) {
			problem(id, "started %v, finished %v", r.StartedAt, r.FinishedAt)
		}
		durations = append(durations, r.FinishedAt.Sub(r.StartedAt))
	}
	// The audit trail: its chain verifies, and each run has its launch and
	// its end, once each.
	if _, err := n.srv.db.VerifyAudit(); err != nil {
		problems = append(problems, fmt.Sprintf("the audit trail does not verify after the load: %v", err))
	}
	events, err := n.srv.db.AuditTrail(nil)
	if err != nil {
		b.Fatal(err)
	}
	actions := map[string][]string{}
	for _, e := range events {
		actions[e.RunID] = append(actions[e.RunID], e.Action)
	}
	for _, id := range res.ids {
		if want := []string{"launch", string(StatusSucceeded)}; id != "" && !slices.Equal(actions[id], want) {
			problem(id, "audit events %v, want %v", actions[id], want)
		}
	}
	if len(actions[""]) > 0 {
		problems = append(problems, fmt.Sprintf("audit events for no run: %v", actions[""]))
	}

	// No two runs of one directory at once; never more than max_parallel.
	type span struct {
		id         string
		start, end time.Time
	}
	var spans []span
	perDir := map[string][]span{}
	for _, r := range runs {
		s := span{r.ID, r.StartedAt, r.FinishedAt}
		spans = append(spans, s)
		perDir[r.Workdir] = append(perDir[r.Workdir], s)
	}
	for _, ss := range perDir {
		slices.SortFunc(ss, func(a, c span) int { return a.start.Compare(c.start) })
		for i := 1; i < len(ss); i++ {
			if ss[i].start.Before(ss[i-1].end) {
				problem(ss[i].id, "started while run %s of the same directory was running", ss[i-1].id)
			}
		}
	}
	maxAtOnce := 0
	for _, s := range spans {
		at := 0
		for _, o := range spans {
			if !o.start.After(s.start) && o.end.After(s.start) {
				at++
			}
		}
		maxAtOnce = max(maxAtOnce, at)
	}
	if maxAtOnce > loadParallel {
		problems = append(problems, fmt.Sprintf("%d runs executed at once; max_parallel is %d", maxAtOnce, loadParallel))
	}

	// Followers: what each read is the stored log as `log` prints it.
	logsOK, queued, running := 0, 0, 0
	for i, f := range res.followers {
		if f.runID == "" {
			problems = append(problems, fmt.Sprintf("follower %d never got a run", i))
			continue
		}
		switch f.status {
		case StatusQueued:
			queued++
		case StatusRunning:
			running++
		}
		want := followOutput(n.storedLog(b, f.runID), byID[f.runID])
		switch {
		case f.err != nil:
			problems = append(problems, fmt.Sprintf("follower %d of run %s: %v\n%s", i, f.runID, f.err, f.errOut.String()))
		case !bytes.Equal(f.out.Bytes(), want):
			problems = append(problems, fmt.Sprintf("follower %d of run %s read %d bytes, the stored log has %d; first difference at byte %d",
				i, f.runID, f.out.Len(), len(want), firstDiff(f.out.String(), string(want))))
		case len(want) == 0:
			problems = append(problems, fmt.Sprintf("follower %d of run %s: the stored log is empty", i, f.runID))
		default:
			logsOK++
		}
	}

	slices.Sort(res.launches)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	perRun := res.wall / loadRuns
	directPerRun := direct.wall / time.Duration(len(direct.durations))
	runMed, directMed := medianDuration(durations), medianDuration(direct.durations)
	b.ReportMetric(float64(perRun), "ns/op")
	b.ReportMetric(float64(loadRuns)/res.wall.Minutes(), "runs/min")
	b.ReportMetric(float64(len(direct.durations))/direct.wall.Minutes(), "direct-runs/min")
	b.ReportMetric(float64(perRun)/float64(directPerRun), "ratio")
	b.ReportMetric(float64(runMed)/float64(directMed), "run-ratio")
	b.ReportMetric(ms(runMed), "run-p50-ms")
	b.ReportMetric(ms(directMed), "direct-run-p50-ms")
	b.ReportMetric(res.launchWall.Seconds(), "launch-s")
	b.ReportMetric(ms(res.launches[len(res.launches)/2]), "launch-p50-ms")
	b.ReportMetric(ms(res.launches[len(res.launches)*99/100]), "launch-p99-ms")
	b.ReportMetric(float64(res.peakRSS)/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(res.baseRSS)/(1<<20), "base-rss-MB")
	b.ReportMetric(float64(procStatusBytes("VmHWM"))/(1<<20), "hwm-MB")
	b.ReportMetric(float64(len(res.ids)-len(bad)), "runs-ok")
	b.ReportMetric(float64(logsOK), "logs-ok")
	b.ReportMetric(float64(queued), "queued-follows")
	b.ReportMetric(float64(running), "running-follows")
	b.ReportMetric(float64(maxAtOnce), "max-at-once")
	b.ReportMetric(res.wall.Seconds(), "wall-s")
	// The figures again as a sentence: a failing benchmark prints no
	// metrics line, and a failure is when they matter.
	b.Logf("%d runs in %.1f s (%.0f runs/min, %.2f× direct), peak RSS %.1f MB (server, clients and benchmark in one process); %d of %d runs ended exactly once, %d of %d followers read the whole log, at most %d runs at once",
		loadRuns, res.wall.Seconds(), float64(loadRuns)/res.wall.Minutes(), float64(perRun)/float64(directPerRun),
		float64(res.peakRSS)/(1<<20), len(res.ids)-len(bad), loadRuns, logsOK, loadFollowers, maxAtOnce)
	for _, p := range problems {
		b.Error(p)
	}
}

// followOutput is what `log ID --follow` prints for a run that ended: its
// stored log as the log command prints it, then the run's final status line
// on a line of its own.
func followOutput(log []byte, r store.Run) []byte {
	out := printable(log)
	if len(log) > 0 && log[len(log)-1] != '\n' {
		out = append(out, '\n')
	}
	return fmt.Appendf(out, "run %s %s: %s\n", r.ID, r.Status, screentext.Sentence(r.Message))
}

// storedLog is run id's whole log as stored.
func (n *loadNode) storedLog(b *testing.B, id string) []byte {
	chunks, err := n.srv.db.ReadLog(id, 0)
	if err != nil {
		b.Fatalf("reading the log of run %s: %v", id, err)
	}
	var log []byte
	for _, c := range chunks {
		log = append(log, c.Data...)
	}
	return log
}

// procStatusBytes is a "NAME: N kB" field of /proc/self/status in bytes (0
// if unknown).
func procStatusBytes(name string) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
