package scenario

import "github.com/switchtender/switchtender/server/internal/testkit"

// Configuration blocks shared with package server's tests.
const (
	approveAllData         = testkit.ApproveAllData
	dataTemplates          = testkit.DataTemplates
	networkTemplate        = testkit.NetworkTemplate
	brokenTemplate         = testkit.BrokenTemplate
	twoReviewRules         = testkit.TwoReviewRules
	holdRnetForBob         = testkit.HoldRnetForBob
	poolDataTemplate       = testkit.PoolDataTemplate
	slowPoolTemplate       = testkit.SlowPoolTemplate
	slowCredentialTemplate = testkit.SlowCredentialTemplate
	relayScanConfig        = testkit.RelayScanConfig
	secretDataTemplate     = testkit.SecretDataTemplate
)
