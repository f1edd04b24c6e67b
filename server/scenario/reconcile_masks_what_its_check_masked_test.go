package scenario

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// plainTokenConfig is infra/plaintoken: a variable the configuration
// declares plain, which the template's survey asks for as a secret, into a
// terraform_data input. OpenTofu does not mark it, so only the masker
// keeps it out of what the run shows.
const plainTokenConfig = `variable "token" {
  type = string
}

resource "terraform_data" "token" {
  input = var.token
}
`

// quotingPolicy holds every terraform_data create, quoting its input: a
// policy's message may quote the plan.
const quotingPolicy = `package switchtender.plan

hold contains msg if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
	msg := sprintf("%s gets input %s", [rc.address, rc.change.after.input])
}
`

// plainTokenTemplates are a template asking for infra/plaintoken's token
// as a secret answer, and a rule whose policy quotes it (%s: the policy's
// path).
const plainTokenTemplates = `
rule "quote" {
  templates = ["plaintoken"]
  plan_gate = %q
}
template "plaintoken" {
  project = "infra"
  command = "infra/plaintoken"
  survey "token" {
    type      = "string"
    sensitive = true
  }
}
`

// The secret answer a drift check was given is masked in the change set
// of the reconcile that carries the check's plan, as it is in the check's,
// and in the reasons the rules give for holding it: the reconcile's
// approver sees no more of it than the check showed.
func TestAReconcileMasksTheSecretAnswersItsCheckWasGiven(t *testing.T) {
	t.Parallel()
	const canary = "reconcile-canary-4b19e7d2"
	h := writeHarness(t, "", fmt.Sprintf(plainTokenTemplates, writePolicy(t, "quote.rego", quotingPolicy)))
	testkit.WriteFiles(t, h.project, map[string]string{"infra/plaintoken/main.tf": plainTokenConfig})
	h.start()
	out, errOut, _ := h.sshStdin("alice", `{"token":"`+canary+`"}`, "launch", "plaintoken", "--check", "--answers", "-", "--json")
	id := runIDOf(t, out+errOut)
	h.waitStatus(id, store.StatusSucceeded)
	check := h.show("bob", id)
	if check.Check == nil || !check.Check.Kept || check.Changes == nil {
		t.Fatalf("the check kept no plan or no change set: %s %s", check.Status, check.Message)
	}
	if body := changesBody(t, h, id); strings.Contains(body, canary) || !strings.Contains(body, "terraform_data.token") {
		t.Fatalf("the check's own change set shows the secret answer or not the resource:\n%s", body)
	}
	if shown := h.mustSSH("bob", "show", id); strings.Contains(shown, canary) || !strings.Contains(shown, "terraform_data.token gets input ***") {
		t.Fatalf("the check does not show the policy's masked reason:\n%s", shown)
	}
	var rec api.RunView
	if err := json.Unmarshal([]byte(h.mustSSH("alice", "reconcile", id, "--json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Changes == nil {
		t.Fatalf("the reconcile has no change set")
	}
	for what, text := range map[string]string{
		"show --changes":        h.mustSSH("bob", "show", rec.ID, "--changes"),
		"show --changes --json": h.mustSSH("bob", "show", rec.ID, "--changes", "--json"),
		"show --json":           h.mustSSH("bob", "show", rec.ID, "--json"),
		"show":                  h.mustSSH("bob", "show", rec.ID),
	} {
		if strings.Contains(text, canary) {
			t.Errorf("the reconcile's %s shows the check's secret answer:\n%s", what, text)
		}
	}
	if got, want := changesBody(t, h, rec.ID), changesBody(t, h, id); got != want {
		t.Errorf("the reconcile shows another change set than its check's:\n%s\n---\n%s", got, want)
	}
}
