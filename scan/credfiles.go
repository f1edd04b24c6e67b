package scan

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var (
	remoteStateSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "config"}}}
	// credentialSchema reads the arguments of credentialFileArgs from a
	// backend or key_provider body; exec is a block there (the
	// kubernetes backend's credential plugin).
	credentialSchema = func() *hcl.BodySchema {
		s := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "exec"}}}
		for _, n := range credentialFileArgs {
			if n != "exec" {
				s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
			}
		}
		return s
	}()
)

// runsWhy is what the file an argument of credentialFileArgs names can
// run, for a finding's reason.
func runsWhy(name string) string {
	for _, a := range fileArguments {
		if a.runs && a.name == name {
			return a.what
		}
	}
	return "a file that can run a program"
}

// remoteStateReason returns the Reason of a finding for a data
// "terraform_remote_state" block whose config names an argument of
// credentialFileArgs (any backend's), or whose config is not a plain object
// the scan can read; "" otherwise. A key is read as OpenTofu evaluates it,
// a JSON key as the template it is there ("${\"shared\"}_config_files"), so
// a key that needs anything but literals to evaluate cannot be read.
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
		k, diags := p.Key.Value(&hcl.EvalContext{})
		if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			return "data \"terraform_remote_state\" has a config key the scan cannot read (it is not made of literals); left unread"
		}
		if n := k.AsString(); slices.Contains(credentialFileArgs, n) {
			return fmt.Sprintf("data \"terraform_remote_state\" names %s, %s, and the configuration chose it; the plan reads it", n, runsWhy(n))
		}
	}
	return ""
}

// credentialArgIn returns the first argument of credentialFileArgs body
// has ("exec" for an exec block), "" for none, or the reason body cannot
// be read for them.
func credentialArgIn(body hcl.Body) (name, unreadable string) {
	content, _, diags := body.PartialContent(credentialSchema)
	if diags.HasErrors() {
		return "", diags.Error()
	}
	for _, n := range credentialFileArgs {
		if _, ok := content.Attributes[n]; ok {
			return n, ""
		}
	}
	if len(content.Blocks) > 0 {
		return "exec", ""
	}
	return "", ""
}

// keyProviderFileReason returns the Reason of a finding for an encryption
// key_provider whose body names an argument of credentialFileArgs (any key
// provider's or backend's), which OpenTofu reads at init and plan, or that
// cannot be read for them; "" otherwise.
func keyProviderFileReason(kb *hcl.Block) string {
	n, bad := credentialArgIn(kb.Body)
	switch {
	case bad != "":
		return fmt.Sprintf("encryption key_provider %q could not be read for the credentials files it names: %s", kb.Labels[0], bad)
	case n == "exec":
		return fmt.Sprintf("encryption key_provider %q has an exec block: it runs a program when OpenTofu builds the key", kb.Labels[0])
	case n != "":
		return fmt.Sprintf("encryption key_provider %q names %s, %s, and the configuration chose it; OpenTofu reads it when it builds the key", kb.Labels[0], n, runsWhy(n))
	}
	return ""
}

// backendFileReason returns the Reason of a finding for the root module's
// backend block b in a pull request's plan (Options.PullRequest) when it
// names an argument of credentialFileArgs or an exec block, or cannot be
// read for them; "" otherwise. The block must match the checkout's
// (server's sameBackend), but the file it names may be the branch's own
// (a relative path is read from the branch's tree), and init reads it.
func backendFileReason(b *hcl.Block) string {
	n, bad := credentialArgIn(b.Body)
	switch {
	case bad != "":
		return fmt.Sprintf("backend %q could not be read for the credentials files it names: %s", b.Labels[0], bad)
	case n == "exec":
		return fmt.Sprintf("backend %q in a pull request's plan has an exec block: it runs a program when init configures the backend", b.Labels[0])
	case n != "":
		return fmt.Sprintf("backend %q in a pull request's plan names %s, %s; init reads it, and the branch may hold the file (name it in the credential's environment instead, such as AWS_SHARED_CREDENTIALS_FILE or KUBE_CONFIG_PATH)", b.Labels[0], n, runsWhy(n))
	}
	return ""
}
