package tui

import (
	"strings"
	"testing"
)

// A refused run's detail names the rules that would also have held it and
// says no approval releases it; it never says the run "was held". It once
// read "was held by: few-destroys, agents / ended refused before every rule
// was released" and "not released" under each rule, of a run nothing held.
func TestARefusedRunSaysWhichRulesWouldAlsoHaveHeldIt(t *testing.T) {
	f := newFake()
	r := f.details["r-7"]
	r.Status, r.WaitingForMe = "refused", false
	r.Message = "The rules refuse this apply: plan deletes terraform_data.old_a (rule protect). Nothing was applied."
	f.details["r-7"] = r
	d := newDriver(t, f, Options{Width: 120, Height: 60})
	d.openRun("r-7")
	d.waitText("status: refused")
	v := d.view()
	for _, want := range []string{"would also have held it: few-destroys, agents", "refused by the rules: no approval releases it", "Rules that would also have held it"} {
		if !strings.Contains(v, want) {
			t.Errorf("the refused run's detail lacks %q:\n%s", want, v)
		}
	}
	for _, not := range []string{"was held by", "Why it was held", "not released", "before every rule was released"} {
		if strings.Contains(v, not) {
			t.Errorf("the refused run's detail says %q:\n%s", not, v)
		}
	}
}
