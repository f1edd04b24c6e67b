package planview

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAShortSecretUnderARepeatedJSONKeyIsNeverShown guards a JSON string
// whose object repeats a key: the parsed document keeps only the key's
// last value while the view shows the whole document as text, so a short
// secret (one the masker cannot find inside a longer string) under the
// first copy of the key was shown.
func TestAShortSecretUnderARepeatedJSONKeyIsNeverShown(t *testing.T) {
	before, _ := json.Marshal(`{"pin":"q7","pin":"ok","n":1}`)
	after, _ := json.Marshal(`{"pin":"q7","pin":"ok","n":2}`)
	plan := planWith(
		change("terraform_data.secret", `["update"]`, `"before":{"input":"q7"},"after":{"input":"q8"},"after_unknown":{},"before_sensitive":{"input":true},"after_sensitive":{"input":true}`),
		change("terraform_data.doc", `["update"]`, `"before":{"input":`+string(before)+`},"after":{"input":`+string(after)+`},"after_unknown":{},"before_sensitive":{},"after_sensitive":{}`),
	)
	cs := mustBuild(t, plan)
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "q7") || strings.Contains(Text(cs, 0), "q7") {
		t.Errorf("the short secret shows:\n%s", Text(cs, 0))
	}
	doc := resourceAt(t, cs, "terraform_data.doc")
	if len(doc.Attributes) != 1 || !doc.Attributes[0].Sensitive || !doc.Attributes[0].Changed {
		t.Errorf("the document holding the secret is not a changed sensitive path: %+v", doc.Attributes)
	}
}
