package server

import (
	"strings"
	"testing"
	"time"
)

// TestScheduleServerWiring starts a real server whose template asks for a
// check every minute, with the tick shortened: the schedule launches as
// "schedule" through Launch at start and, over many ticks, leaves at most one
// scheduled check; if this version refuses checks, the refusal is in the
// operator log once, not once per tick.
func TestScheduleServerWiring(t *testing.T) {
	old := checkScheduleTick
	checkScheduleTick = 20 * time.Millisecond
	t.Cleanup(func() { checkScheduleTick = old })
	h, logs := newLimitHarness(t, Options{}, `
template "net" {
  project     = "infra"
  command     = "infra/network"
  check_every = "1m"
}
`)
	if h.srv.checks == nil {
		t.Fatal("Start did not start the check schedule")
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logs.String(), "scheduled drift check") {
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled check launched or refused in 60 s; log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * checkScheduleTick) // many more ticks
	runs, err := h.srv.db.ListRuns()
	if err != nil {
		t.Fatal(err)
	}
	var checks int
	for _, r := range runs {
		if Kind(r.Kind) == KindCheck && r.Template == "net" && r.Requester == scheduleIdentity.Name {
			checks++
		}
	}
	out := logs.String()
	if testing.Verbose() {
		t.Log(out)
	}
	if refused := strings.Count(out, "scheduled drift check refused"); refused > 0 {
		if refused != 1 || checks != 0 {
			t.Errorf("refusals logged %d times (want 1), %d checks stored (want 0):\n%s", refused, checks, out)
		}
	} else if checks != 1 {
		t.Errorf("%d scheduled checks stored within a minute of check_every = \"1m\", want 1:\n%s", checks, out)
	}
	h.stop()
}
