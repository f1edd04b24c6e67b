package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// dryRunMinRounds is the fewest alternating rounds a case runs, whatever
// b.N is, so that the medians mean something.
const dryRunMinRounds = 9

// dryRunCase is one configuration the benchmark plans both ways.
type dryRunCase struct {
	name     string
	tmpl     string // template name
	template string // configuration block of the template
	dir      string // command directory inside testdata/project
	args     []string
	want     string // text the plan prints
}

var dryRunCases = []dryRunCase{
	// The spec's example ("OpenTofu runs", Example).
	{"network", "network", networkTemplate, "infra/network", []string{"--var", "region=eu-west-1"}, `vpc = "vpc-eu-west-1"`},
	// Fifty terraform_data resources: a plan with work in it.
	{"bench50", "bench", `
template "bench" {
  project = "infra"
  command = "infra/bench"
}
`, "infra/bench", nil, "Plan: 50 to add"},
}

// BenchmarkDryRun measures a dry run through the server against the same
// three tofu processes run directly, and reports the ratio from the same run
// (target at most 1.10):
//
//	go test -run '^$' -bench DryRun ./server/
//
// Through the server: wall time of `launch TEMPLATE --dry-run --wait` over a
// fresh SSH connection, from dialling to the command's exit. Directly:
// `tofu init -input=false -no-color`, `tofu plan -input=false -no-color
// -out=FILE` and `tofu show -json -no-color FILE` (the rendering a dry run
// measures its plan from) in a copy of the same directory, with the environment the
// server builds for the run (exec.BuildEnv), output captured in memory. The
// two alternate (which goes first alternates too), after one warm-up each;
// every figure is a median over the rounds.
//
// Metrics: ratio (server wall / direct wall, medians), server-ms,
// direct-ms, direct-init-ms, direct-plan-ms, direct-show-ms, and the server's time split from
// client clocks and the run's stored timestamps (same machine, same clock):
//
//   - ssh-ms: TCP connect, key exchange and public-key authentication;
//   - accept-ms: session open to the run's CreatedAt (exec request, parsing,
//     survey checks);
//   - dispatch-ms: CreatedAt to StartedAt (run and audit commits, queue,
//     claim);
//   - prepare-ms: StartedAt to the init process start (claim commit, run
//     directory, environment);
//   - init-ms, plan-ms: the steps as recorded (compare direct-init-ms and
//     direct-plan-ms: process start and output capture differences);
//   - between-ms: init end to plan start (the step record commit);
//   - finish-ms: plan end to FinishedAt (step record, show -json of the
//     saved plan, its measure and change set, the record commit, last log
//     chunk; compare direct-show-ms);
//   - tail-ms: FinishedAt to the client seeing the exit status (status and
//     audit commits, plan wipe, log end, summary, channel close);
//   - paired-ratio: the median of each round's server wall / direct wall;
//   - overhead-ms: server wall minus the direct wall of the same round;
//   - parts-ms: ssh-ms through tail-ms summed per run (the server's own
//     time, show -json included); steps-extra-ms: init-ms + plan-ms minus
//     the direct init and plan of the same round (how much slower the tool
//     ran under the server);
//   - commit-ms: one bbolt commit in the same store, measured apart;
//     wipe-ms: seal.Wipe of a plan-sized file in the runs directory,
//     measured apart; chunks: log chunks stored per run (one commit each);
//   - rounds: samples behind each median (at least dryRunMinRounds, so the
//     iteration count the framework prints is not the sample count).
func BenchmarkDryRun(b *testing.B) {
	for _, c := range dryRunCases {
		b.Run(c.name, func(b *testing.B) { benchDryRun(b, c) })
	}
}

// dryRunNode is a control node on loopback for a benchmark: the harness's
// set-up for a *testing.B, with one user allowed to launch.
type dryRunNode struct {
	srv     *Server
	project string
	signer  gossh.Signer
}

func newDryRunNode(b *testing.B, template string) *dryRunNode {
	b.Helper()
	dir := b.TempDir()
	n := &dryRunNode{project: filepath.Join(dir, "project")}
	if err := os.CopyFS(n.project, os.DirFS("testdata/project")); err != nil {
		b.Fatal(err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	if n.signer, err = gossh.NewSignerFromKey(priv); err != nil {
		b.Fatal(err)
	}
	pub := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(n.signer.PublicKey())))
	cfgText := fmt.Sprintf(`server {
  ssh_listen = "127.0.0.1:0"
  data_dir = %q
}
project "infra" {
  path = %q
}
user "alice" {
  public_key = %q
  roles = ["launch"]
}
%s`, filepath.Join(dir, "data"), n.project, pub, template)
	cfgPath := filepath.Join(dir, "switchtender.hcl")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		b.Fatalf("loading benchmark configuration: %v", err)
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

// dryRunSample is one dry run through the server, split up.
type dryRunSample struct {
	wall, ssh, accept, dispatch, prepare, init, between, plan, finish, tail time.Duration
	chunks                                                                  int
}

// launch runs `launch ... --dry-run --wait` over a new SSH connection and
// returns the split of its wall time.
func (n *dryRunNode) launch(b *testing.B, c dryRunCase, tmpl string) dryRunSample {
	b.Helper()
	var s dryRunSample
	t0 := time.Now()
	client, err := gossh.Dial("tcp", n.srv.SSHAddr(), &gossh.ClientConfig{
		User:            "alice",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(n.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
	if err != nil {
		b.Fatalf("ssh: %v", err)
	}
	tConnected := time.Now()
	sess, err := client.NewSession()
	if err != nil {
		b.Fatalf("ssh session: %v", err)
	}
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	args := append([]string{"launch", tmpl, "--dry-run", "--wait"}, c.args...)
	err = sess.Run(shellJoin(args))
	tEnd := time.Now()
	sess.Close()
	client.Close()
	if err != nil {
		b.Fatalf("launch: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), c.want) {
		b.Fatalf("the dry run's output lacks %q:\n%s", c.want, out.String())
	}
	s.wall, s.ssh = tEnd.Sub(t0), tConnected.Sub(t0)

	runs, err := n.srv.db.ListRuns()
	if err != nil || len(runs) == 0 {
		b.Fatalf("listing runs: %v", err)
	}
	r := runs[0] // newest first
	if r.Status != StatusSucceeded || len(r.Steps) != 2 || r.Steps[0].Name != "init" || r.Steps[1].Name != "plan" {
		b.Fatalf("run %s: status %s, steps %+v", r.ID, r.Status, r.Steps)
	}
	init, plan := r.Steps[0], r.Steps[1]
	s.accept = r.CreatedAt.Sub(tConnected)
	s.dispatch = r.StartedAt.Sub(r.CreatedAt)
	s.prepare = init.Started.Sub(r.StartedAt)
	s.init = init.Finished.Sub(init.Started)
	s.between = plan.Started.Sub(init.Finished)
	s.plan = plan.Finished.Sub(plan.Started)
	s.finish = r.FinishedAt.Sub(plan.Finished)
	s.tail = tEnd.Sub(r.FinishedAt)
	chunks, err := n.srv.db.ReadLog(r.ID, 0)
	if err != nil {
		b.Fatalf("reading the log: %v", err)
	}
	s.chunks = len(chunks)
	return s
}

// direct runs tofu init, tofu plan -out and tofu show -json of the plan in
// dir with env, as a person would, output captured in memory; it returns
// the three durations.
func dryRunDirect(b *testing.B, binary, dir, planFile string, env []string, want string) (initD, planD, showD time.Duration) {
	b.Helper()
	var out bytes.Buffer
	run := func(args ...string) time.Duration {
		cmd := osexec.Command(binary, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("tofu %s: %v\n%s", args[0], err, out.String())
		}
		return d
	}
	initD = run(exec.InitArgs(true)...)
	planD = run(exec.PlanArgs(planFile)...)
	if !strings.Contains(out.String(), want) {
		b.Fatalf("the direct plan's output lacks %q:\n%s", want, out.String())
	}
	showD = run(exec.ShowJSONArgs(planFile)...)
	return initD, planD, showD
}

func benchDryRun(b *testing.B, c dryRunCase) {
	tmpl := c.tmpl
	n := newDryRunNode(b, c.template)

	// The direct side: a copy of the same directory, the environment the
	// server builds for this run, the same binary.
	directDir := filepath.Join(b.TempDir(), "wd")
	if err := os.CopyFS(directDir, os.DirFS(filepath.Join("testdata/project", c.dir))); err != nil {
		b.Fatal(err)
	}
	planFile := filepath.Join(b.TempDir(), planFileName)
	n.launch(b, c, tmpl) // warm-up; it also stores the run's variables
	runs, err := n.srv.db.ListRuns()
	if err != nil {
		b.Fatal(err)
	}
	env := exec.BuildEnv(exec.EnvSpec{Base: testEnviron, Vars: runs[0].Vars})
	binary, err := exec.OpenTofu.Find(envValue(env, "PATH"))
	if err != nil {
		b.Fatal(err)
	}
	dryRunDirect(b, binary, directDir, planFile, env, c.want) // warm-up

	var server []dryRunSample
	var dInit, dPlan, dShow, dWall []time.Duration
	round := func(i int) {
		viaServer := func() { server = append(server, n.launch(b, c, tmpl)) }
		viaDirect := func() {
			ini, pl, sh := dryRunDirect(b, binary, directDir, planFile, env, c.want)
			dInit, dPlan, dShow, dWall = append(dInit, ini), append(dPlan, pl), append(dShow, sh), append(dWall, ini+pl+sh)
		}
		if i%2 == 0 {
			viaServer()
			viaDirect()
		} else {
			viaDirect()
			viaServer()
		}
	}
	i := 0
	for b.Loop() {
		round(i)
		i++
	}
	for ; i < dryRunMinRounds; i++ {
		round(i)
	}

	pick := func(f func(dryRunSample) time.Duration) time.Duration {
		var ds []time.Duration
		for _, s := range server {
			ds = append(ds, f(s))
		}
		return medianDuration(ds)
	}
	sWall := pick(func(s dryRunSample) time.Duration { return s.wall })
	dMed := medianDuration(dWall)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(sWall), "ns/op")
	b.ReportMetric(float64(sWall)/float64(dMed), "ratio")
	b.ReportMetric(ms(sWall), "server-ms")
	b.ReportMetric(ms(dMed), "direct-ms")
	b.ReportMetric(ms(medianDuration(dInit)), "direct-init-ms")
	b.ReportMetric(ms(medianDuration(dPlan)), "direct-plan-ms")
	b.ReportMetric(ms(medianDuration(dShow)), "direct-show-ms")
	for _, m := range []struct {
		unit string
		f    func(dryRunSample) time.Duration
	}{
		{"ssh-ms", func(s dryRunSample) time.Duration { return s.ssh }},
		{"accept-ms", func(s dryRunSample) time.Duration { return s.accept }},
		{"dispatch-ms", func(s dryRunSample) time.Duration { return s.dispatch }},
		{"prepare-ms", func(s dryRunSample) time.Duration { return s.prepare }},
		{"init-ms", func(s dryRunSample) time.Duration { return s.init }},
		{"between-ms", func(s dryRunSample) time.Duration { return s.between }},
		{"plan-ms", func(s dryRunSample) time.Duration { return s.plan }},
		{"finish-ms", func(s dryRunSample) time.Duration { return s.finish }},
		{"tail-ms", func(s dryRunSample) time.Duration { return s.tail }},
	} {
		b.ReportMetric(ms(pick(m.f)), m.unit)
	}
	var chunks []time.Duration
	for _, s := range server {
		chunks = append(chunks, time.Duration(s.chunks))
	}
	b.ReportMetric(float64(medianDuration(chunks)), "chunks")
	// Paired figures: each server run against the direct run of its own
	// round, which cancels slow drift in the machine's load.
	var over, parts, steps, ratios []time.Duration
	for i, s := range server {
		ratios = append(ratios, time.Duration(float64(s.wall)/float64(dWall[i])*1e6))
		over = append(over, s.wall-dWall[i])
		parts = append(parts, s.ssh+s.accept+s.dispatch+s.prepare+s.between+s.finish+s.tail)
		steps = append(steps, s.init+s.plan-dInit[i]-dPlan[i])
	}
	b.ReportMetric(float64(medianDuration(ratios))/1e6, "paired-ratio")
	b.ReportMetric(ms(medianDuration(over)), "overhead-ms")
	b.ReportMetric(ms(medianDuration(parts)), "parts-ms")
	b.ReportMetric(ms(medianDuration(steps)), "steps-extra-ms")
	b.ReportMetric(float64(len(server)), "rounds")
	b.ReportMetric(ms(dryRunCommitCost(b, n.srv.db)), "commit-ms")
	b.ReportMetric(ms(dryRunWipeCost(b, n.srv.runsDir, planFile)), "wipe-ms")
}

// dryRunCommitCost is the median time of one small bbolt commit (an audit event)
// in the server's store: the price of each store write a run makes.
func dryRunCommitCost(b *testing.B, db *store.DB) time.Duration {
	var ds []time.Duration
	for range 15 {
		t0 := time.Now()
		if err := db.Audit(store.AuditEvent{At: t0, Actor: "benchmark", Action: "probe"}); err != nil {
			b.Fatal(errors.Join(errors.New("probing a store commit"), err))
		}
		ds = append(ds, time.Since(t0))
	}
	return medianDuration(ds)
}

// dryRunWipeCost is the median time seal.Wipe takes on a copy of the saved
// plan in the server's runs directory: the wipe a dry run does after its
// status is stored and before its followers hear that the log ended.
func dryRunWipeCost(b *testing.B, runsDir, planFile string) time.Duration {
	plan, err := os.ReadFile(planFile)
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(runsDir, "wipe-probe")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, planFileName)
	var ds []time.Duration
	for range 9 {
		if err := os.WriteFile(path, plan, 0o600); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := seal.Wipe(path); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	return medianDuration(ds)
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
