package scan

import (
	"encoding/json"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// literal is what literalValue makes of an expression.
type literal int

const (
	notLiteral    literal = iota // anything evaluated: a reference, call, interpolation, conditional...
	literalNull                  // the keyword null
	literalString                // a quoted string with no interpolation or directive
)

// literalValue says whether expr, from the configuration file src, is a
// plain literal: a quoted string without interpolation or template
// directive, or null; for a string it also returns its value. Anything that
// is evaluated (a variable, a function call, a template with "${" or "%{",
// a conditional, even one whose result is fixed) is notLiteral. In JSON
// syntax a string is a template, so one that holds "${" or "%{" is
// notLiteral (counting "$${" escapes too: it errs toward notLiteral).
func literalValue(expr hcl.Expression, src []byte) (literal, string) {
	switch e := expr.(type) {
	case *hclsyntax.LiteralValueExpr:
		if e.Val.IsNull() {
			return literalNull, ""
		}
		return notLiteral, ""
	case *hclsyntax.TemplateExpr:
		var b strings.Builder
		for _, p := range e.Parts {
			lit, ok := p.(*hclsyntax.LiteralValueExpr)
			if !ok || !lit.Val.IsKnown() || lit.Val.IsNull() || lit.Val.Type() != cty.String {
				return notLiteral, ""
			}
			b.WriteString(lit.Val.AsString())
		}
		return literalString, b.String()
	case hclsyntax.Expression:
		return notLiteral, ""
	}
	return jsonLiteral(expr, src)
}

// jsonLiteral is literalValue for an expression of the JSON syntax: it reads
// the JSON token the expression was parsed from.
func jsonLiteral(expr hcl.Expression, src []byte) (literal, string) {
	r := expr.Range()
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte >= r.End.Byte {
		return notLiteral, ""
	}
	raw := src[r.Start.Byte:r.End.Byte]
	if string(raw) == "null" {
		return literalNull, ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return notLiteral, ""
	}
	if strings.Contains(s, "${") || strings.Contains(s, "%{") {
		return notLiteral, ""
	}
	return literalString, s
}
