package tui

import (
	"strings"
	"testing"
)

// openRun moves the run list cursor to id and opens it.
func (d *driver) openRun(id string) {
	d.t.Helper()
	d.waitText("r-4")
	for _, r := range d.root().list.runs {
		if r.ID == id {
			break
		}
		d.press("down")
	}
	d.press("enter")
	d.waitText("Run " + id)
}

func TestGoldenRunList(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.waitText("r-4")
	golden(t, "runlist", d.view())
}

func TestGoldenRunListWide(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 140, Height: 40})
	d.waitText("r-4")
	golden(t, "runlist_wide", d.view())
}

func TestGoldenRunLog(t *testing.T) {
	f := newFake()
	ch := make(chan LogChunk, 4)
	var log strings.Builder
	for i := 1; i <= 30; i++ {
		log.WriteString("tofu: step " + strings.Repeat("·", i%7) + " line " + itoa(i) + "\n")
	}
	ch <- LogChunk{Offset: 0, Data: []byte(log.String())}
	f.logs["r-5"] = ch
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5")
	d.waitText("line 30")
	d.waitText("command:")
	golden(t, "rundetail_log", d.view())

	d.press("c")
	d.waitText("Cancel run r-5?")
	golden(t, "rundetail_cancel_confirm", d.view())
}

func TestGoldenHeldApply(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	golden(t, "held", d.view())

	d.press("a")
	golden(t, "held_confirm", d.view())

	d.press("esc", "r")
	d.typeText("too many destroys")
	golden(t, "held_reject", d.view())
}

func TestGoldenHeldRequestStage(t *testing.T) {
	f := newFake()
	r := f.details["r-7"]
	p := *r.Proposal
	p.Stage, p.Add, p.Destroy, p.Replace, p.Addresses, p.PlanText = "request", 0, 0, 0, nil, ""
	r.Proposal = &p
	f.details["r-7"] = r
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("HELD BEFORE PLANNING")
	golden(t, "held_request", d.view())
}

func TestGoldenLauncher(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("n")
	d.waitText("launch a run")
	d.waitText("dns")
	golden(t, "launcher_pick", d.view())

	d.press("enter")
	d.press("ctrl+u")
	d.typeText("moon")
	d.press("tab")
	d.waitText("✗ region must look like eu-west-1")
	golden(t, "launcher_form_error", d.view())
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
