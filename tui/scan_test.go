package tui

import (
	"strings"
	"testing"
)

// A run the configuration scan held shows that nothing planned yet, how
// many findings there are, and each finding by address with file:line and
// reason; the release confirmation says it plans what the scan found.
func TestHeldScreenShowsScanFindings(t *testing.T) {
	f := newFake()
	f.editRun("r-7", func(r *RunDetail) {
		r.Proposal.Stage = "scan"
		r.Proposal.Add, r.Proposal.Change, r.Proposal.Destroy = 0, 0, 0
		r.Proposal.Addresses = nil
		r.Proposal.PlanText = ""
		r.Proposal.Findings = []Finding{
			{Address: "module.a.module.b.data.external.x", Reason: "infra/a/b/main.tf:1: data \"external\" runs the program it names"},
			{Address: "data.http.p", Reason: "infra/main.tf:4: data \"http\" with method POST writes"},
		}
	})
	d := newDriver(t, f, Options{Width: 100, Height: 40})
	d.openRun("r-7")
	d.waitText("SCAN FOUND 2")
	screen := d.view()
	for _, want := range []string{"nothing is planned yet", "Scan findings (2)", "module.a.module.b.data.external.x",
		"infra/a/b/main.tf:1: data \"external\"", "data.http.p"} {
		if !strings.Contains(screen, want) {
			t.Errorf("held screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "DESTROYS") {
		t.Errorf("a run held before planning shows plan counts:\n%s", screen)
	}
}
