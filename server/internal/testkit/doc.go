// Package testkit holds the helpers the control node's tests share: package
// server's internal tests and the scenario tests of server/scenario. It
// finds the pinned OpenTofu once per test binary (Main), makes SSH keys
// and dials, waits, configures and starts relay workers, speaks the relay
// wire as a raw worker, hands a plan over, and receives webhooks.
//
// It is a normal package so that both test packages can import it; being
// internal, only packages under server/ can.
package testkit
