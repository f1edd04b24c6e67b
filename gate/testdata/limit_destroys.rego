# A plan_gate limiting destroys by resource type.
#
# - deny (refuse the apply) a plan destroying more than 2 terraform_data
#   resources, or any aws_db_instance;
# - hold (needs approval) a plan destroying a terraform_data whose address
#   says "protected".
package switchtender.plan

max_deletes := {"terraform_data": 2, "aws_db_instance": 0}

# Every resource change that destroys an object: deletes and replaces alike.
deletes contains rc if {
	some rc in input.plan.resource_changes
	"delete" in rc.change.actions
}

deny contains msg if {
	some type, limit in max_deletes
	n := count([rc | some rc in deletes; rc.type == type])
	n > limit
	msg := sprintf("plan destroys %d %s resources; at most %d may be destroyed", [n, type, limit])
}

hold contains msg if {
	some rc in deletes
	rc.type == "terraform_data"
	contains(rc.address, "protected")
	msg := sprintf("plan destroys protected resource %s", [rc.address])
}
