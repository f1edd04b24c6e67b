package gate

import (
	"bytes"

	"github.com/open-policy-agent/opa/v1/ast"
)

// jsonToValue converts a JSON document to a Rego value.
func jsonToValue(doc []byte) (ast.Value, error) {
	return ast.ValueFromReader(bytes.NewReader(doc))
}
