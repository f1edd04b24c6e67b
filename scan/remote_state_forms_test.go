package scan

import (
	"strings"
	"testing"
)

// A data "terraform_remote_state" is a pull request's finding in every form
// OpenTofu reads one: JSON syntax (object and array forms), a check block, a
// .tofu file shadowing a .tf, an override file, and a module called with
// count = 0 (in JSON too).
func TestScanFindsEveryFormOfARemoteState(t *testing.T) {
	const rs = "data \"terraform_remote_state\" \"%s\" {\n  backend = \"http\"\n  config = { address = \"https://evil.example\" }\n}\n"
	cases := map[string]map[string]string{
		"json":           {"main.tf.json": `{"data": {"terraform_remote_state": {"j": {"backend": "http", "config": {"address": "https://evil.example"}}}}}`},
		"json array":     {"main.tf.json": `{"data": [{"terraform_remote_state": [{"j": [{"backend": "http"}]}]}]}`},
		"check":          {"main.tf": "check \"c\" {\n" + strings.ReplaceAll(rs, "%s", "c") + "  assert {\n    condition = true\n    error_message = \"x\"\n  }\n}\n"},
		"tofu file":      {"main.tf": "", "main.tofu": strings.ReplaceAll(rs, "%s", "t")},
		"override":       {"main.tf": "", "x_override.tf": strings.ReplaceAll(rs, "%s", "o")},
		"module count 0": {"main.tf": "module \"m\" {\n  source = \"./m\"\n  count = 0\n}\n", "m/main.tf": strings.ReplaceAll(rs, "%s", "m")},
		"json module":    {"main.tf.json": `{"module": {"m": {"source": "./m", "count": 0}}}`, "m/x.tf.json": `{"data": {"terraform_remote_state": {"m": {"backend": "local"}}}}`},
	}
	for name, files := range cases {
		for k, v := range files {
			if v == "" {
				delete(files, k)
			}
		}
		root := writeTree(t, files)
		r := scanOpts(t, Options{Root: root, Dir: root, PullRequest: true})
		found := false
		for _, f := range r.Findings {
			found = found || strings.Contains(f.Address, "terraform_remote_state")
		}
		if !found {
			t.Errorf("%s: a pull request's remote state is no finding: %+v", name, r.Findings)
		}
	}
}
