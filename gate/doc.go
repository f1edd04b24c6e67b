// Package gate decides on the apply a saved plan proposes: it measures what
// the plan would do from `tofu show -json PLANFILE` (AnalyzePlan,
// SensitiveValues), evaluates Rego plan_gate policies (CompilePolicy,
// Policy.Evaluate), and applies the configured rules, approval rules and
// agent exemptions (Decide, NeedsSavedPlan, Exempt). The behaviour comes from
// the spec section "A gated apply carries out the approved plan" and "An
// apply an AI agent asks for". The gate fails closed: a plan it cannot read,
// a policy that does not compile, times out or errors, all hold the apply
// and refuse a reconcile; none lets it through. A rule's kinds cover the
// kinds they name, each as itself ("apply" covers a reconcile too: see
// KindMatches).
//
// # What the summary counts
//
// AnalyzePlan maps each resource change's action list, as OpenTofu writes it
// (internal/command/jsonplan), to one action: create ["create"], update
// ["update"], delete ["delete"], replace ["delete","create"] or
// ["create","delete"], forget ["forget"], forget+create ["forget","create"]
// (a replace under lifecycle { destroy = false }), and import for a no-op
// that imports. ["no-op"] and ["read"] are left out; any other list is an
// error. Destroy counts deletes and replaces; Replace counts replaces; a
// forget is not a destroy and is counted in Forget.
//
// # Decisions
//
// NeedsSavedPlan says when an apply runs in two steps (plan -out, then the
// saved plan): a rule with max_destroy or a plan_gate covers it, an approval
// rule would hold it, its submission asks for approval, or an agent without
// an exemption asks for it. Decide then decides on the planned proposal:
// max_destroy exceeded holds, a plan_gate deny refuses and its hold holds, a
// plan_gate that fails to compile, errors or times out holds with its error,
// an approval rule holds, a submission asking for approval holds whatever the
// rules say, and an agent's proposal holds unless an exemption covers it. A
// rule with approvers and a plan-content condition holds only when the
// condition does; its approvers are who may release it. A rule with
// approvers alone, or require_approval, holds everything it covers.
//
// # plan_gate policies
//
// A plan_gate is a Rego v1 module declaring package switchtender.plan. The
// gate evaluates the query data.switchtender.plan and reads two optional
// rules from it:
//
//   - deny contains msg if { ... }: each message refuses the apply; no
//     approval releases it.
//   - hold contains msg if { ... }: each message holds the apply until an
//     approver releases the plan's digest.
//
// Both must be sets of strings. The input document is
//
//	{
//	  "plan":    <the tofu show -json document, unchanged>,
//	  "summary": {"add": N, "change": N, "destroy": N, "replace": N,
//	              "forget": N, "import": N,
//	              "by_action": {"delete": ["addr", ...], "replace": [...], ...}},
//	  "run":     {"template": "...", "project": "...", "kind": "apply",
//	              "requester": "alice", "requester_kind": "person"}
//	}
//
// where by_action's keys are the Action* constants (create, update, delete,
// replace, forget, forget+create, import), run.kind is one of the Kind*
// constants, and run.requester_kind is "person" or "agent".
//
// Decide converts only the top-level keys of the plan document its policies
// can reach (a policy that refers to input.plan.resource_changes alone is
// given only that key; one that uses input.plan or input as a whole, or a
// variable key, is given everything). The rest is still checked to be JSON.
//
// The built-ins in RefusedBuiltins (http.send, net.lookup_ip_addr,
// opa.runtime) reach outside the server process or read its environment; a
// module calling one does not compile. Each evaluation runs under a timeout.
//
// An example policy (testdata/limit_destroys.rego is a fuller one):
//
//	package switchtender.plan
//
//	deletes contains rc if {
//		some rc in input.plan.resource_changes
//		"delete" in rc.change.actions
//	}
//
//	deny contains msg if {
//		n := count([rc | some rc in deletes; rc.type == "aws_db_instance"])
//		n > 0
//		msg := sprintf("plan destroys %d aws_db_instance resources", [n])
//	}
//
//	hold contains msg if {
//		some rc in deletes
//		contains(rc.address, "protected")
//		msg := sprintf("plan destroys %s", [rc.address])
//	}
package gate
