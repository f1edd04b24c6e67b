# Refused at compile time: a plan_gate may not read the server's environment.
package switchtender.plan

hold contains msg if {
	rt := opa.runtime()
	rt.env.AWS_SECRET_ACCESS_KEY != ""
	msg := "credentials are set"
}
