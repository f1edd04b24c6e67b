package scan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var remoteStateSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "backend"}, {Name: "config"}}}

// credentialSchema reads the arguments names from a backend or
// key_provider body: exec is a block there (the kubernetes backend's
// credential plugin), the others attributes.
func credentialSchema(names []string) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, n := range names {
		if n == "exec" {
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: n})
		} else {
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
		}
	}
	return s
}

// remoteStateReason returns the Reason of a finding for a data
// "terraform_remote_state" block (in the file src) whose config names an
// argument of its backend that runs a program (credentialArgs; any
// backend's when the backend is not a plain string), or whose config is
// not a plain object the scan can read; "" otherwise. A key is read as
// OpenTofu evaluates it, a JSON key as the template it is there
// ("${\"shared\"}_config_files"), so a key that needs anything but
// literals to evaluate cannot be read.
func remoteStateReason(b *hcl.Block, src []byte) string {
	content, _, diags := b.Body.PartialContent(remoteStateSchema)
	if diags.HasErrors() {
		return fmt.Sprintf("data \"terraform_remote_state\" could not be read: %s", diags.Error())
	}
	a, ok := content.Attributes["config"]
	if !ok {
		return ""
	}
	typ := ""
	if ba, ok := content.Attributes["backend"]; ok {
		if lit, s := literalValue(ba.Expr, src); lit == literalString {
			typ = s
		}
	}
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		return "data \"terraform_remote_state\" has a config that is not a plain object, so the scan cannot tell whether it names a credentials file whose programs run when the plan reads it; left unread"
	}
	names := credentialArgs("backend", typ)
	for _, p := range pairs {
		k, diags := p.Key.Value(&hcl.EvalContext{})
		if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			return "data \"terraform_remote_state\" has a config key the scan cannot read (it is not made of literals); left unread"
		}
		for _, n := range names {
			if k.AsString() == n {
				return fmt.Sprintf("data \"terraform_remote_state\" names %s, %s, and the configuration chose it; the plan reads it", n, runsWhy("backend", typ, n))
			}
		}
	}
	return ""
}

// credentialArgIn returns the first of names that body has, "" for none,
// or the reason body cannot be read for them.
func credentialArgIn(body hcl.Body, names []string) (name, unreadable string) {
	content, _, diags := body.PartialContent(credentialSchema(names))
	if diags.HasErrors() {
		return "", diags.Error()
	}
	for _, n := range names {
		if _, ok := content.Attributes[n]; ok {
			return n, ""
		}
	}
	if len(content.Blocks) > 0 {
		return content.Blocks[0].Type, ""
	}
	// exec written as an argument: an error in OpenTofu, but no less a
	// program for the scan.
	for _, b := range credentialSchema(names).Blocks {
		s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: b.Type}}}
		if c, _, diags := body.PartialContent(s); !diags.HasErrors() && c.Attributes[b.Type] != nil {
			return b.Type, ""
		}
	}
	return "", ""
}

// keyProviderFileReason returns the Reason of a finding for an encryption
// key_provider whose body names an argument of its type that runs a
// program (credentialArgs), which OpenTofu reads at init and plan, or
// that cannot be read for them; "" otherwise.
func keyProviderFileReason(kb *hcl.Block) string {
	typ := kb.Labels[0]
	n, bad := credentialArgIn(kb.Body, credentialArgs("key_provider", typ))
	switch {
	case bad != "":
		return fmt.Sprintf("encryption key_provider %q could not be read for the credentials files it names: %s", typ, bad)
	case n != "":
		return fmt.Sprintf("encryption key_provider %q names %s, %s, and the configuration chose it; OpenTofu reads it when it builds the key", typ, n, runsWhy("key_provider", typ, n))
	}
	return ""
}

// backendFileReason returns the Reason of a finding for the root module's
// backend block b in a pull request's plan (Options.PullRequest) when it
// names an argument of its type that runs a program (credentialArgs, exec
// included), or cannot be read for them; "" otherwise. The block must
// match the checkout's (server's sameBackend), but the file it names may
// be the branch's own (a relative path is read from the branch's tree),
// and init reads it.
func backendFileReason(b *hcl.Block) string {
	typ := b.Labels[0]
	n, bad := credentialArgIn(b.Body, credentialArgs("backend", typ))
	switch {
	case bad != "":
		return fmt.Sprintf("backend %q could not be read for the credentials files it names: %s", typ, bad)
	case n != "":
		return fmt.Sprintf("backend %q in a pull request's plan names %s, %s; init reads it, and the branch may hold the file or program (name the file by an absolute path in the credential's environment instead, such as AWS_SHARED_CREDENTIALS_FILE or KUBE_CONFIG_PATH)", typ, n, runsWhy("backend", typ, n))
	}
	return ""
}
