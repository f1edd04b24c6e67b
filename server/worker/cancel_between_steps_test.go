package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// cancellingWire records the messages a job sends and cancels the job,
// as a control node's cancel would, the moment the step named at reports
// it finished: before the job goes on to anything later.
type cancellingWire struct {
	mu     sync.Mutex
	at     string
	cancel context.CancelCauseFunc
	after  []relay.Msg // what the job sent once cancelled
	done   bool
}

func (w *cancellingWire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(p))
	sc.Buffer(nil, relay.MaxLine)
	for sc.Scan() {
		var m relay.Msg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if w.done {
			w.after = append(w.after, m)
		}
		if m.Type == relay.MsgStep && m.Step == w.at && !m.Finished.IsZero() && !w.done {
			w.done = true
			w.cancel(errJobCancelled)
		}
	}
	return len(p), nil
}

// Once, a cancel that landed after a gated plan's plan process ended and
// before its show -json started let the worker report show -json as a
// step it then never ran. A cancel between two processes starts no later
// one and reports no step after it.
func TestACancelBetweenTwoStepsStartsNoLaterStep(t *testing.T) {
	w, dir := bareWorker(t)
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "ran")
	tofu := "#!/bin/sh\necho \"$1\" >> " + ran + "\nfor a in \"$@\"; do case \"$a\" in -out=*) echo plan > \"${a#-out=}\";; esac; done\necho '{}'\n"
	if err := os.WriteFile(filepath.Join(bin, "tofu"), []byte(tofu), 0o755); err != nil {
		t.Fatal(err)
	}
	w.opts.Environ = []string{"PATH=" + bin}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	wire := &cancellingWire{at: "plan", cancel: cancel}
	c := relay.NewConn(strings.NewReader(""), wire)
	job := relay.Msg{Type: relay.MsgJob, Run: "7", Token: 1, Project: "infra", Command: "infra/network",
		Kind: string(store.KindApply), Phase: string(store.PhasePlan), Gated: true, Clear: true, Payload: []byte("{}")}
	end := w.runJob(ctx, c, job, nil)
	if !wire.done {
		t.Fatal("the plan step never reported it finished")
	}
	for _, m := range wire.after {
		if m.Type == relay.MsgStep || m.Type == relay.MsgPlanStart {
			t.Errorf("after the cancel the worker reported %s %q", m.Type, m.Step)
		}
	}
	if b, _ := os.ReadFile(ran); strings.Contains(string(b), "show") {
		t.Errorf("after the cancel the worker ran show: the tool ran %q", b)
	}
	if end.result.Status != store.StatusCancelled {
		t.Errorf("result = %s %q, want cancelled", end.result.Status, end.result.Message)
	}
}
