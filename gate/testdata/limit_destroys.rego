# A plan_gate limiting destroys by resource type.
#
# - deny (refuse the apply) a plan destroying more than 2 terraform_data
#   resources, or any aws_db_instance;
# - hold (needs approval) a plan destroying a terraform_data whose address
#   says "protected".
#
# A destroy is any resource change whose actions include "delete": a delete,
# or a replace (["delete","create"] or ["create","delete"]). A forget is not.
package switchtender.plan

max_deletes := {"terraform_data": 2, "aws_db_instance": 0}

deny contains msg if {
	some type, limit in max_deletes
	n := count([1 |
		some rc in input.plan.resource_changes
		rc.type == type
		"delete" in rc.change.actions
	])
	n > limit
	msg := sprintf("plan destroys %d %s resources; at most %d may be destroyed", [n, type, limit])
}

hold contains msg if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
	contains(rc.address, "protected")
	"delete" in rc.change.actions
	msg := sprintf("plan destroys protected resource %s", [rc.address])
}
