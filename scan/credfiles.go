package scan

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// credentialFileArgs are the arguments of a backend or key provider that
// name a configuration file whose contents run programs when it is read:
// an AWS shared config's credential_process, a kubeconfig's exec plugin.
// The configuration choosing such a file chooses what runs at plan (or at
// init), with the run's environment, as an external data source does.
var credentialFileArgs = []string{"config_path", "config_paths", "shared_config_files", "shared_credentials_files", "exec"}

var (
	remoteStateSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "config"}}}
	credentialSchema  = func() *hcl.BodySchema {
		s := &hcl.BodySchema{}
		for _, n := range credentialFileArgs {
			if n != "exec" { // a block in key providers
				s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
			}
		}
		s.Blocks = []hcl.BlockHeaderSchema{{Type: "exec"}}
		return s
	}()
)

// remoteStateReason returns the Reason of a finding for a data
// "terraform_remote_state" block whose config names a credentials or
// cluster configuration file (credentialFileArgs), or whose config is not a
// plain object the scan can read; "" otherwise.
func remoteStateReason(b *hcl.Block) string {
	content, _, diags := b.Body.PartialContent(remoteStateSchema)
	if diags.HasErrors() {
		return fmt.Sprintf("data \"terraform_remote_state\" could not be read: %s", diags.Error())
	}
	a, ok := content.Attributes["config"]
	if !ok {
		return ""
	}
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		return "data \"terraform_remote_state\" has a config that is not a plain object, so the scan cannot tell whether it names a credentials file whose programs run when the plan reads it; left unread"
	}
	for _, p := range pairs {
		k, diags := p.Key.Value(nil)
		if diags.HasErrors() || k.Type() != cty.String || k.IsNull() {
			return "data \"terraform_remote_state\" has a config key the scan cannot read; left unread"
		}
		if slices.Contains(credentialFileArgs, k.AsString()) {
			return fmt.Sprintf("data \"terraform_remote_state\" names %s: a credentials or cluster file the configuration chooses can run a program (credential_process, an exec plugin) when the plan reads it", k.AsString())
		}
	}
	return ""
}

// keyProviderFileReason returns the Reason of a finding for an encryption
// key_provider whose body names a credentials or cluster configuration
// file (credentialFileArgs), which OpenTofu reads at init and plan; ""
// otherwise.
func keyProviderFileReason(kb *hcl.Block) string {
	content, _, _ := kb.Body.PartialContent(credentialSchema)
	if content == nil {
		return ""
	}
	for _, n := range credentialFileArgs {
		if _, ok := content.Attributes[n]; ok && n != "exec" {
			return fmt.Sprintf("encryption key_provider %q names %s: a credentials file the configuration chooses can run a program (credential_process) when OpenTofu builds the key", kb.Labels[0], n)
		}
	}
	if len(content.Blocks) > 0 {
		return fmt.Sprintf("encryption key_provider %q has an exec block: it runs a program when OpenTofu builds the key", kb.Labels[0])
	}
	return ""
}
