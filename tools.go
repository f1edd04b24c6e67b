//go:build tools

// Package tools pins the libraries Switchtender is built on, so that
// `go mod tidy` keeps them while the packages that use them grow.
package tools

import (
	_ "charm.land/bubbles/v2/help"
	_ "charm.land/bubbles/v2/textinput"
	_ "charm.land/bubbles/v2/viewport"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "charm.land/ssh"
	_ "charm.land/wish/v2"
	_ "charm.land/wish/v2/activeterm"
	_ "charm.land/wish/v2/bubbletea"
	_ "charm.land/wish/v2/logging"
	_ "charm.land/wish/v2/recover"
	_ "filippo.io/age"
	_ "github.com/hashicorp/hcl/v2"
	_ "github.com/hashicorp/hcl/v2/gohcl"
	_ "github.com/hashicorp/hcl/v2/hclsimple"
	_ "github.com/hashicorp/terraform-json"
	_ "github.com/open-policy-agent/opa/v1/rego"
	_ "go.etcd.io/bbolt"
	_ "golang.org/x/crypto/ssh"
)
