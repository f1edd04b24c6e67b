# A plan_gate reading the summary and the run: an agent may not replace
# anything, and any forget needs approval.
package switchtender.plan

deny contains msg if {
	input.run.requester_kind == "agent"
	input.summary.replace > 0
	msg := sprintf("agent %s may not replace resources (%d planned)", [input.run.requester, input.summary.replace])
}

hold contains msg if {
	some addr in input.summary.by_action.forget
	msg := sprintf("plan forgets %s", [addr])
}
