package config

import (
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// docs/configuration.md documents every block and attribute the parser
// accepts, each in a table row of its own: a new attribute without
// documentation fails here.
func TestEveryAttributeIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	schemas := map[string]*hcl.BodySchema{
		"server": serverSchema, "project": projectSchema, "credential": credentialSchema, "template": templateSchema,
		"survey": surveySchema, "queue": queueSchema, "pool": poolSchema, "rule": ruleSchema,
		"exemption": exemptionSchema, "user": userSchema, "agent": agentSchema, "notify": notifySchema, "forge": forgeSchema,
	}
	for _, blk := range rootSchema.Blocks {
		if !strings.Contains(doc, "`"+blk.Type) {
			t.Errorf("block %s is not documented", blk.Type)
		}
		if schemas[blk.Type] == nil {
			t.Errorf("block %s has no schema in this test", blk.Type)
		}
	}
	for name, s := range schemas {
		for _, a := range s.Attributes {
			if !strings.Contains(doc, "| `"+a.Name+"`") {
				t.Errorf("%s attribute %s has no row in docs/configuration.md", name, a.Name)
			}
		}
	}
}
