package server

import "github.com/switchtender/switchtender/server/internal/testkit"

// Configuration blocks and helpers shared with the scenario tests
// (server/scenario), whose files define them no longer here.
const (
	brokenTemplate = testkit.BrokenTemplate
)
