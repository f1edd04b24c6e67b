package switchtender.plan

deny contains msg if {
	input.summary.destroy > 
}
