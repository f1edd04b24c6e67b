package server

import (
	"strings"
	"testing"
)

// A drift check whose plan the rules refuse says the reconcile is refused,
// and a refused apply names the rule that would also have held it, never
// "held by". The check once ended "`reconcile N` proposes applying exactly
// that plan" while its own reconcile line said it could not be proposed, and
// a refused run's show said "held by rule …" of a run nothing held.
func TestRefusedPlansSayTheyAreRefusedNotProposedOrHeld(t *testing.T) {
	t.Parallel()
	few := "rule \"few\" {\n  templates = [\"data\"]\n  max_destroy = 0\n}\n"
	h := driftedDataWith(t, map[string]string{"protect": denyDeletes}, policyRule("protect")+few)
	v := h.check("2")
	mustContain(t, "the check's message", v.Message, "Drift found", "the rules refuse applying it (", "rule protect", "so `reconcile 2` is refused")
	if strings.Contains(v.Message, "proposes applying exactly that plan") {
		t.Errorf("the check's message offers a reconcile the rules refuse: %q", v.Message)
	}
	out, _, _ := h.ssh("alice", "launch", "data", "--wait")
	if !strings.Contains(out, "run 3: refused") {
		t.Fatalf("the apply that deletes was not refused:\n%s", out)
	}
	text := h.mustSSH("alice", "show", "3")
	mustContain(t, "show of the refused run", text, "rule few would also have held it: plan destroys 2")
	if strings.Contains(text, "held by rule") {
		t.Errorf("show of a refused run says it was held:\n%s", text)
	}
}
