package gate

import (
	"errors"
	"strings"
	"testing"
)

// resource_drift and resource_changes are read apart, per address and
// attribute, and no value is ever kept.
func TestAnalyzeDrift(t *testing.T) {
	doc := `{"format_version":"1.2",
"resource_drift":[{"address":"aws_s3_bucket.b","change":{"actions":["update"],
  "before":{"acl":"private","tags":{"a":"1"},"secret":"Hunter2-Canary"},
  "after":{"acl":"public-read","tags":{"a":"1"},"secret":"Other-Canary"}}},
  {"address":"aws_instance.gone","change":{"actions":["delete"],"before":{"id":"i-1"},"after":null}}],
"resource_changes":[{"address":"aws_s3_bucket.b","change":{"actions":["update"],
  "before":{"acl":"public-read","tags":{"a":"1"}},"after":{"acl":"private","tags":{"a":"1"}},"after_unknown":{}}},
  {"address":"x.y","change":{"actions":["no-op"],"before":{},"after":{}}},
  {"address":"x.z","change":{"actions":["create"],"before":null,"after":{"id":null},"after_unknown":{"id":true}}}]}`
	d, err := AnalyzeDrift([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Drift) != 2 || d.Drift[0].Address != "aws_s3_bucket.b" || strings.Join(d.Drift[0].Attributes, ",") != "acl,secret" {
		t.Fatalf("drift = %+v", d.Drift)
	}
	if d.Drift[1].Action != "delete" || d.Drift[1].Attributes != nil {
		t.Errorf("deleted outside = %+v", d.Drift[1])
	}
	if len(d.Changes) != 2 || strings.Join(d.Changes[0].Attributes, ",") != "acl" || d.Changes[1].Action != "create" {
		t.Errorf("changes = %+v", d.Changes)
	}
	if strings.Contains(strings.Join(append(d.Drift[0].Attributes, d.Drift[0].Address), " "), "Canary") {
		t.Error("a value leaked")
	}
	if _, err := AnalyzeDrift([]byte(`{"format_version":"9.0"}`)); !errors.Is(err, ErrUnreadablePlan) {
		t.Errorf("unsupported version: %v", err)
	}
}
