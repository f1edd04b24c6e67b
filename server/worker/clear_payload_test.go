package worker

// A payload in clear holds nothing secret and no saved plan.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// Once, a job marked Clear whose payload carried secrets to mask, a saved
// plan or its digest was run as it came: the worker started its tool on a
// payload no delivery key sealed, though a payload in clear holds nothing
// secret and no saved plan (docs/configuration.md, delivery_identity).
func TestAClearPayloadCarryingSecretsOrAPlanRunsNothing(t *testing.T) {
	for name, p := range map[string]relay.Payload{
		"secrets": {Secrets: []string{"s3cret-value"}},
		"plan":    {Plan: []byte("not sealed"), Digest: "sha256:00"},
		"digest":  {Digest: "sha256:00"},
	} {
		t.Run(name, func(t *testing.T) {
			w, dir := bareWorker(t)
			bin := filepath.Join(dir, "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bin, "tofu"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			w.opts.Environ = []string{"PATH=" + bin}
			payload, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			phase := store.PhasePlan
			if p.Plan != nil {
				phase = store.PhaseApply
			}
			var wire bytes.Buffer
			c := relay.NewConn(strings.NewReader(""), &wire)
			job := relay.Msg{Type: relay.MsgJob, Run: "7", Token: 1, Project: "infra", Command: "infra/data",
				Kind: string(store.KindPlan), Phase: string(phase), Clear: true, Payload: payload}
			end := w.runJob(context.Background(), c, job, nil)
			if end.result.Status != store.StatusFailed || !strings.Contains(end.result.Message, "nothing ran") {
				t.Errorf("result = %s %q, want failed saying nothing ran", end.result.Status, end.result.Message)
			}
			sc := bufio.NewScanner(&wire)
			sc.Buffer(nil, relay.MaxLine)
			for sc.Scan() {
				var m relay.Msg
				if json.Unmarshal(sc.Bytes(), &m) == nil && m.Type == relay.MsgStep {
					t.Errorf("the worker started %s on a clear payload carrying %s", m.Step, name)
				}
			}
		})
	}
}
