package testkit

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
