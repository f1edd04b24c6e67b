package scan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// The schemas the scan reads a configuration file with. PartialContent
// takes only these from a body, in the native and the JSON syntax alike,
// and leaves every other block and argument alone.
var (
	fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "data", LabelNames: []string{"type", "name"}},
		{Type: "ephemeral", LabelNames: []string{"type", "name"}},
		{Type: "module", LabelNames: []string{"name"}},
		{Type: "check", LabelNames: []string{"name"}},
		{Type: "terraform"},
	}}
	checkSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "data", LabelNames: []string{"type", "name"}},
	}}
	terraformSchema  = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "encryption"}, {Type: "backend", LabelNames: []string{"type"}}}}
	encryptionSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "key_provider", LabelNames: []string{"type", "name"}},
		{Type: "method", LabelNames: []string{"type", "name"}},
	}}
	moduleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}}}
	httpSchema   = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "method"}, {Name: "request_body"}}}
)

// runsSomething names the data source and ephemeral resource types that act
// when the plan reads them, whatever their arguments, with what they do.
var runsSomething = map[string]string{
	"external":              "runs the program it names",
	"aws_lambda_invocation": "invokes the AWS Lambda function it names",
	"local_command":         "runs the command it names",
}

// DataReason returns the Reason of a finding for a block of kind "data" or
// "ephemeral" and the given type that acts when the plan reads it, or ""
// when its type is not one of those: external, aws_lambda_invocation and
// local_command always act; http acts when method (its plain-literal value;
// "GET" when absent or null, as the http provider defaults it) is anything
// but exactly GET or HEAD, when methodLiteral is false (the method is not a
// plain literal, so it counts as a write), or when hasBody. check names the check
// block the data source sits in ("" for none). It follows the spec section
// "What a plan runs, and what the gate reads".
func DataReason(kind, typ, check, method string, methodLiteral, hasBody bool) string {
	what := fmt.Sprintf("%s %q", kind, typ)
	if check != "" {
		what = fmt.Sprintf("%s in check %q", what, check)
	}
	when := "when the plan reads it"
	if kind == "ephemeral" {
		when = "when the plan opens it"
	}
	if does, ok := runsSomething[typ]; ok {
		return fmt.Sprintf("%s %s %s", what, does, when)
	}
	if typ != "http" {
		return ""
	}
	switch {
	case !methodLiteral:
		return fmt.Sprintf("%s has a method that is not a plain string, so it may send a write request %s", what, when)
	case method != "GET" && method != "HEAD":
		return fmt.Sprintf("%s sends a %q request %s, not GET or HEAD", what, method, when)
	case hasBody:
		return fmt.Sprintf("%s sends a request body %s", what, when)
	}
	return ""
}

// EncryptionReason returns the Reason of a finding for a key_provider or
// method block (kind) of the given type in an encryption configuration, or
// "" when the type does not run anything: only "external" does, running
// its command whenever OpenTofu reads or writes state or a plan.
func EncryptionReason(kind, typ string) string {
	if typ != "external" {
		return ""
	}
	return fmt.Sprintf("encryption %s %q runs the command it names when the plan is made", kind, typ)
}

// dataBlock returns the Reason for a data or ephemeral block (kind) in
// check ("" for none) of the file src, or "" when the block does not act.
// A body the schema cannot be read from is a reason too.
func dataBlock(kind, check string, b *hcl.Block, src []byte) string {
	typ := b.Labels[0]
	if typ == "terraform_remote_state" && kind == "data" {
		return remoteStateReason(b, src)
	}
	if typ != "http" {
		return DataReason(kind, typ, check, "", true, false)
	}
	content, _, diags := b.Body.PartialContent(httpSchema)
	if diags.HasErrors() {
		return fmt.Sprintf("%s %q could not be read: %s", kind, typ, diags.Error())
	}
	method, methodLiteral := "GET", true
	if a, ok := content.Attributes["method"]; ok {
		switch lit, s := literalValue(a.Expr, src); lit {
		case literalString:
			method = s
		case notLiteral:
			methodLiteral = false
		}
	}
	hasBody := false
	if a, ok := content.Attributes["request_body"]; ok {
		lit, _ := literalValue(a.Expr, src)
		hasBody = lit != literalNull
	}
	return DataReason(kind, typ, check, method, methodLiteral, hasBody)
}
