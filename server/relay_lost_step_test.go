package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/worker"
	"github.com/switchtender/switchtender/store"
)

// workerProcessEnv carries a worker's configuration (JSON) to the test
// binary started as a worker process.
const workerProcessEnv = "SWITCHTENDER_TEST_WORKER"

// TestRelayWorkerProcess is a relay worker when workerProcess starts the
// test binary as one (a real process a test can SIGKILL); otherwise it is
// skipped.
func TestRelayWorkerProcess(t *testing.T) {
	raw := os.Getenv(workerProcessEnv)
	if raw == "" {
		t.Skip("a relay worker only when workerProcess starts the test binary as one")
	}
	var cfg config.Worker
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("the worker process ended: %v", worker.RunWorker(context.Background(), &cfg, worker.WorkerOptions{Environ: testEnviron, Version: "test-process"}))
}

// workerProcess runs cfg's worker as a process of its own (the test
// binary, running TestRelayWorkerProcess) and returns a function that
// SIGKILLs it. When the test ends, the process is killed if still alive,
// and what its runs left running is stopped as the worker's next start
// would.
func workerProcess(t *testing.T, cfg *config.Worker) (kill func()) {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "worker.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(os.Args[0], "-test.run=^TestRelayWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), workerProcessEnv+"="+string(b))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		kill()
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("the worker process's output:\n%s", b)
		}
		if entries, _ := os.ReadDir(filepath.Join(cfg.DataDir, "runs")); len(entries) > 0 {
			var markers []string
			for _, e := range entries {
				markers = append(markers, worker.Marker(cfg.DataDir, e.Name()))
			}
			stopMarked(markers, 2*time.Second)
		}
	})
	return kill
}

// hangingServer is an HTTP server that answers no request until the test
// ends; hit is closed when the first request arrives. A module source or
// a state address on it makes init or plan wait there.
func hangingServer(t *testing.T) (url string, hit <-chan struct{}) {
	t.Helper()
	hitc, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(hitc) })
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL, hitc
}

// lostStepTemplate is a template on pool eu whose working directory each
// test writes into the worker's checkout.
const lostStepTemplate = `
template "rstep" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`

// writeWorkerModule replaces infra/slow's configuration in the worker's
// checkout with tf.
func writeWorkerModule(t *testing.T, w *config.Worker, tf string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.Projects["infra"].Path, "infra/slow/main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A relay worker process SIGKILLed in the middle of a step is reported
// with the step it was in, and says a state lock may be left exactly when
// a step that can take one had started: during apply (which may also
// have changed the state), during plan, during init of a module that
// declares a backend; not during init of one that declares none. The
// run's steps end with the step it was in, never ended. The break it
// guards: the worker reported a step only once it ended, so a worker lost
// during apply was said to be lost "during init", with "no state lock was
// held", though the killed apply had left its lock file, and the run's
// steps stopped at init.
func TestRelayWorkerLostMidStepNamesTheStepAndItsLock(t *testing.T) {
	cases := []struct {
		name   string
		launch []string
		module func(url string) string // the worker's configuration; url is a hanging server's
		slow   string                  // what the log shows once the slow step runs ("": the server is hit)
		step   string
		want   []string
		never  []string
	}{
		{
			name:   "apply",
			launch: []string{"rstep"},
			module: func(string) string {
				return "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" { command = \"echo started-slow; sleep 60\" }\n}\n"
			},
			slow: "started-slow",
			step: "apply",
			want: []string{"stopped heartbeating during apply", "a state lock may be left (apply had started)", "tofu force-unlock",
				"the apply had started, so it may have changed infrastructure and the state"},
			never: []string{"no state lock was held", "during init"},
		},
		{
			name:   "plan",
			launch: []string{"rstep", "--dry-run"},
			module: func(url string) string {
				return "data \"terraform_remote_state\" \"slow\" {\n  backend = \"http\"\n  config = { address = \"" + url + "/state\" }\n}\n"
			},
			step:  "plan",
			want:  []string{"stopped heartbeating during plan", "a state lock may be left (plan had started)"},
			never: []string{"no state lock was held", "the apply had started"},
		},
		{
			name:   "init without a backend",
			launch: []string{"rstep", "--dry-run"},
			module: func(url string) string {
				return "module \"slow\" {\n  source = \"" + url + "/module\"\n}\n"
			},
			step:  "init",
			want:  []string{"stopped heartbeating during init", "no state lock was held"},
			never: []string{"a state lock may be left", "the apply had started"},
		},
		{
			name:   "init with a backend",
			launch: []string{"rstep", "--dry-run"},
			module: func(url string) string {
				return "terraform {\n  backend \"http\" {\n    address = \"" + url + "/state\"\n  }\n}\nmodule \"slow\" {\n  source = \"" + url + "/module\"\n}\n"
			},
			step:  "init",
			want:  []string{"stopped heartbeating during init", "a state lock may be left (init had started)"},
			never: []string{"no state lock was held"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, keys, identity := relayHarness(t, lostStepTemplate)
			url, hit := hangingServer(t)
			w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
			writeWorkerModule(t, w1, c.module(url))
			kill := workerProcess(t, w1)
			id := runIDOf(t, h.mustSSH("alice", append([]string{"launch"}, append(c.launch, "--json")...)...))
			if c.slow != "" {
				waitFor(t, "the slow step to run", 90*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "log", id), c.slow) })
			} else {
				select {
				case <-hit:
				case <-time.After(90 * time.Second):
					r, _ := h.srv.db.GetRun(id)
					t.Fatalf("the %s step never reached the hanging server: %s %s", c.step, r.Status, r.Message)
				}
			}
			kill()
			h.waitStatus(id, StatusFailed, StatusSucceeded, StatusInterrupted, StatusCancelled)
			r, _ := h.srv.db.GetRun(id)
			if r.Status != StatusFailed {
				t.Fatalf("the run of the killed worker: %s: %s", r.Status, r.Message)
			}
			for _, w := range c.want {
				if !strings.Contains(r.Message, w) {
					t.Errorf("message %q lacks %q", r.Message, w)
				}
			}
			for _, w := range c.never {
				if strings.Contains(r.Message, w) {
					t.Errorf("message %q says %q", r.Message, w)
				}
			}
			lastStepIsUnended(t, r, c.step)
		})
	}
}

// lastStepIsUnended checks that the run's last step is step, started and
// never ended (exit code -1, no finish), and that every earlier step ended.
func lastStepIsUnended(t *testing.T, r store.Run, step string) {
	t.Helper()
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	n := len(r.Steps)
	if n == 0 || r.Steps[n-1].Name != step {
		t.Fatalf("the run's steps are %v; the last should be %s, the step the worker was in", names, step)
	}
	if last := r.Steps[n-1]; last.ExitCode != -1 || !last.Finished.IsZero() || last.Started.IsZero() {
		t.Errorf("the step the worker was lost in: %+v, want started, exit code -1 and no finish", last)
	}
	for _, s := range r.Steps[:n-1] {
		if s.Finished.IsZero() {
			t.Errorf("an earlier step never ended: %+v (steps %v)", s, names)
		}
	}
}

// The control node judges a lost worker's lock from the steps it reported
// started: a state lock may be left once plan, apply or an init the worker
// did not find lock-free had started (even if it ended since), and never
// for state pull, show -json or a lock-free init alone; it names the step
// the worker was in, or the one it last ended. Only listed steps are the
// run's steps. The break it guards: the step was taken from the last
// message, so a worker lost in apply was "during init" with no lock.
func TestRelayLostWorkerLockFollowsTheStepsThatStarted(t *testing.T) {
	start := func(step string, quiet, noLock bool) relay.Msg {
		return relay.Msg{Type: relay.MsgStep, Step: step, Quiet: quiet, NoLock: noLock, Started: time.Now()}
	}
	end := func(step string, quiet bool) relay.Msg {
		return relay.Msg{Type: relay.MsgStep, Step: step, Quiet: quiet, Started: time.Now(), Finished: time.Now()}
	}
	cases := []struct {
		name  string
		steps []relay.Msg
		want  []string
		never string
		run   []string // the run's steps
	}{
		{"in state pull after a lock-free init", []relay.Msg{start("init", false, true), end("init", false), start("state pull", true, false)},
			[]string{"stopped heartbeating during state pull", "no state lock was held"}, "may be left", []string{"init"}},
		{"between steps after a lock-free init", []relay.Msg{start("init", false, true), end("init", false)},
			[]string{"stopped heartbeating after init ended, before it reported another step", "no state lock was held"}, "may be left", []string{"init"}},
		{"in an init that may lock", []relay.Msg{start("init", false, false)},
			[]string{"stopped heartbeating during init", "a state lock may be left (init had started)"}, "no state lock", []string{"init"}},
		{"in show -json after a plan ended", []relay.Msg{start("init", false, true), end("init", false), start("plan", false, false), end("plan", false), start("show -json", true, false)},
			[]string{"stopped heartbeating during show -json", "a state lock may be left (plan had started)"}, "no state lock", []string{"init", "plan"}},
		{"after a plan whose start never came", []relay.Msg{end("plan", false)},
			[]string{"after plan ended", "a state lock may be left (plan had started)"}, "no state lock", []string{"plan"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, keys, _ := relayHarness(t, "")
			raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
			if welcome.Type != relay.MsgWelcome {
				t.Fatalf("hello: %+v", welcome)
			}
			raw.Send(relay.Msg{Type: relay.MsgPoll})
			id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=x", "--json"))
			if offer := raw.Recv(); offer.Type != relay.MsgOffer || offer.Run != id {
				t.Fatalf("offer %+v", offer)
			}
			raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
			job := raw.Recv()
			for _, m := range c.steps {
				m.Run, m.Token = id, job.Token
				raw.Send(m)
			}
			h.waitStatus(id, StatusFailed)
			r, _ := h.srv.db.GetRun(id)
			for _, w := range c.want {
				if !strings.Contains(r.Message, w) {
					t.Errorf("message %q lacks %q", r.Message, w)
				}
			}
			if strings.Contains(r.Message, c.never) {
				t.Errorf("message %q says %q", r.Message, c.never)
			}
			var names []string
			for _, s := range r.Steps {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.run, ",") {
				t.Errorf("the run's steps are %v, want %v", names, c.run)
			}
		})
	}
}
