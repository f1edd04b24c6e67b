# Refused at compile time: a plan_gate may not reach the network.
package switchtender.plan

deny contains msg if {
	resp := http.send({"method": "GET", "url": "https://example.com/"})
	resp.status_code != 200
	msg := "the approval service is down"
}
