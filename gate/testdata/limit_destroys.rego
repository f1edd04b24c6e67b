# A plan_gate limiting destroys by resource type.
#
# - deny (refuse the apply) a plan destroying more than 2 terraform_data
#   resources, or any aws_db_instance;
# - hold (needs approval) a plan destroying a terraform_data whose address
#   says "protected".
package switchtender.plan

max_deletes := {"terraform_data": 2, "aws_db_instance": 0}

# The resource changes that destroy an object, deletes and replaces alike,
# as {"address", "type"}. Collecting the whole change objects into a set
# would hash every before/after value, which is slow on a large plan.
deletes := [{"address": rc.address, "type": rc.type} |
	some rc in input.plan.resource_changes
	"delete" in rc.change.actions
]

deny contains msg if {
	some type, limit in max_deletes
	n := count([d | some d in deletes; d.type == type])
	n > limit
	msg := sprintf("plan destroys %d %s resources; at most %d may be destroyed", [n, type, limit])
}

hold contains msg if {
	some d in deletes
	d.type == "terraform_data"
	contains(d.address, "protected")
	msg := sprintf("plan destroys protected resource %s", [d.address])
}
