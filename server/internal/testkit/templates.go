package testkit

import (
	"fmt"
	"strings"
)

// Configuration blocks the scenario and internal tests share.

// ApproveAllData is a rule that holds every run of template "data".
const ApproveAllData = `
rule "everything" {
  templates        = ["data"]
  require_approval = true
}
`

// DataTemplates are templates "data" and "data-free" over infra/data.
const DataTemplates = `
template "data" {
  project = "infra"
  command = "infra/data"
  survey "instances" {
    type = "number"
    default = 3
  }
  survey "generation" {
    type = "string"
    default = "1"
  }
}
template "data-free" {
  project = "infra"
  command = "infra/data"
  survey "instances" {
    type = "number"
    default = 3
  }
}
`

// NetworkTemplate is template "network" over infra/network, asking for a region.
const NetworkTemplate = `
template "network" {
  project = "infra"
  command = "infra/network"
  survey "region" {
    type = "string"
  }
}
`

// BrokenTemplate is template "broken" over infra/broken, whose plan fails.
const BrokenTemplate = `
template "broken" {
  project = "infra"
  command = "infra/broken"
}
`

// TwoReviewRules are two rules holding every run of "data", one released
// by alice, the other by bob.
const TwoReviewRules = `
rule "alice-reviews" {
  templates        = ["data"]
  require_approval = true
  approvers        = ["alice"]
}
rule "bob-reviews" {
  templates        = ["data"]
  require_approval = true
  approvers        = ["bob"]
}
`

// HoldRnetForBob holds every apply of rnet for bob, so a gated plan is saved.
const HoldRnetForBob = `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`

// PoolDataTemplate is a pool template over infra/data (terraform_data
// resources: a plan that destroys is made without any provider) and a rule
// that holds any plan destroying something for bob: a plan-content rule,
// so an apply of rdata is gated (its plan is handed over and measured).
const PoolDataTemplate = `
template "rdata" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "no-destroys-rdata" {
  templates   = ["rdata"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`

// SlowPoolTemplate is a template on pool eu applying infra/slow.
const SlowPoolTemplate = `
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`

// SlowCredentialTemplate is a pool template whose credential comes from
// a command that takes 3 seconds (a vault login, say), longer than pool
// eu's 2-second lease timeout and well inside the 60 seconds a credential
// command may take.
const SlowCredentialTemplate = `
credential "slow13e" {
  command = ["/bin/sh", "-c", "sleep 3; echo slow-token-13e"]
  env_var = "SLOW_TOKEN_13E"
}
template "rslowcred" {
  project     = "infra"
  command     = "infra/network"
  queue       = "eu"
  credentials = ["slow13e"]
  survey "region" { type = "string" }
}
`

// RelayScanConfig adds to relayHarness a rule that holds every run of the
// scanned templates for bob but exempts their dry runs behind the scan,
// templates on pool eu for three scan fixtures, and a pull-request
// template.
const RelayScanConfig = `
rule "review" {
  templates        = ["rs-clean", "rs-modvar", "rs-deep"]
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
template "rs-clean" {
  project = "infra"
  command = "infra/scan/clean"
  queue   = "eu"
}
template "rs-modvar" {
  project = "infra"
  command = "infra/scan/modvar"
  queue   = "eu"
}
template "rs-deep" {
  project = "infra"
  command = "infra/scan/deep"
  queue   = "eu"
}
template "rpr" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
`

// ScanCases are the fixtures of package server's testdata/scan, each a
// working directory a template of the same name ("scan-CASE") runs in.
var ScanCases = []string{"deep", "post", "methodvar", "get", "shadow", "json", "check", "localcmd",
	"encryption", "modvar", "registry", "broken", "clean"}

// ScanConfig is a template per scan fixture and a rule "review" that holds
// every run for bob but exempts dry runs by exclude_dry_run.
func ScanConfig() string {
	var cfg strings.Builder
	for _, c := range ScanCases {
		fmt.Fprintf(&cfg, "template %q {\n  project = \"infra\"\n  command = \"infra/scan/%s\"\n}\n", "scan-"+c, c)
	}
	cfg.WriteString(`
rule "review" {
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
`)
	return cfg.String()
}

// SecretDataTemplate is a configuration block of the tests.
const SecretDataTemplate = `
template "data-secret" {
  project = "infra"
  command = "infra/data"
  survey "instances" {
    type = "number"
  }
  survey "token" {
    type      = "string"
    sensitive = true
  }
}
rule "destroys" {
  templates   = ["data-secret"]
  max_destroy = 0
  approvers   = ["bob"]
}
`
