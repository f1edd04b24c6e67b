// Package scenario holds the control node's scenario tests: each starts a
// control node composed as cmd/switchtender composes it (server.New, Start,
// the sshd front door, Attach) on loopback, with the real pinned OpenTofu
// and, where a test needs them, real relay workers, and drives it over SSH
// as people, agents and workers do. State is read through the JSON the
// commands print or through the store the server owns (Server.Store).
package scenario

import (
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// TestMain makes sure the pinned OpenTofu is installed before any test runs.
func TestMain(m *testing.M) { testkit.Main(m, nil) }
