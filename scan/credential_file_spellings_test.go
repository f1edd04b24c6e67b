package scan

import (
	"fmt"
	"strings"
	"testing"
)

// argValue is a value of the right shape for a file argument: a list for
// the plural spellings, a string otherwise.
func argValue(name string) (native, json string) {
	if strings.HasSuffix(name, "s") && name != "credentials" {
		return `["./f"]`, `["./f"]`
	}
	return `"./f"`, `"./f"`
}

// remoteStateForms are a terraform_remote_state of backend typ whose config
// has arg, in each syntax and file kind OpenTofu loads, in the root
// module, in a check block and in a child module: file name to contents.
func remoteStateForms(typ, arg string) map[string]map[string]string {
	v, jv := argValue(arg)
	if arg == "exec" {
		v, jv = `[{ api_version = "v1", command = "sh" }]`, `[{"api_version": "v1", "command": "sh"}]`
	}
	native := fmt.Sprintf("data \"terraform_remote_state\" \"r\" {\n  backend = %q\n  config = {\n    %s = %s\n  }\n}\n", typ, arg, v)
	quoted := fmt.Sprintf("data \"terraform_remote_state\" \"r\" {\n  backend = %q\n  config = {\n    %q = %s\n  }\n}\n", typ, arg, v)
	json := fmt.Sprintf(`{"data": {"terraform_remote_state": {"r": {"backend": %q, "config": {%q: %s}}}}}`, typ, arg, jv)
	return map[string]map[string]string{
		"main.tf":        {"main.tf": native},
		"quoted key":     {"main.tf": quoted},
		"main.tofu":      {"main.tofu": native},
		"main.tf.json":   {"main.tf.json": json},
		"main.tofu.json": {"main.tofu.json": json},
		"check block":    {"main.tf": "check \"c\" {\n" + native + "}\n"},
		"child module":   {"main.tf": `module "m" { source = "./m" }`, "m/main.tf": native},
	}
}

// keyProviderForms are an encryption key_provider of type typ with arg,
// in each syntax and file kind, and in a child module.
func keyProviderForms(typ, arg string) map[string]map[string]string {
	v, jv := argValue(arg)
	native := fmt.Sprintf("terraform {\n  encryption {\n    key_provider %q \"k\" {\n      %s = %s\n    }\n  }\n}\n", typ, arg, v)
	json := fmt.Sprintf(`{"terraform": {"encryption": {"key_provider": {%q: {"k": {%q: %s}}}}}}`, typ, arg, jv)
	return map[string]map[string]string{
		"main.tf":        {"main.tf": native},
		"main.tofu":      {"main.tofu": native},
		"main.tf.json":   {"main.tf.json": json},
		"main.tofu.json": {"main.tofu.json": json},
		"override file":  {"main.tf": `resource "terraform_data" "r" {}`, "main_override.tf": native},
		"child module":   {"main.tf": `module "m" { source = "./m" }`, "m/main.tf": native},
	}
}

// rootBackendForms are a root module's backend block of type typ with
// arg, in each syntax and file kind.
func rootBackendForms(typ, arg string) map[string]map[string]string {
	v, jv := argValue(arg)
	body, jbody := fmt.Sprintf("%s = %s", arg, v), fmt.Sprintf("%q: %s", arg, jv)
	if arg == "exec" {
		body, jbody = "exec {\n      api_version = \"v1\"\n      command = \"./token.sh\"\n    }", `"exec": {"api_version": "v1", "command": "./token.sh"}`
	}
	native := fmt.Sprintf("terraform {\n  backend %q {\n    %s\n  }\n}\n", typ, body)
	json := fmt.Sprintf(`{"terraform": {"backend": {%q: {%s}}}}`, typ, jbody)
	return map[string]map[string]string{
		"main.tf":        {"main.tf": native},
		"main.tofu":      {"main.tofu": native},
		"main.tf.json":   {"main.tf.json": json},
		"main.tofu.json": {"main.tofu.json": json},
		"override file":  {"main.tf": `resource "terraform_data" "r" {}`, "backend_override.tf": native},
	}
}

// TestScanFindsEveryArgumentThatRunsAProgramInEveryForm writes, for each
// argument of fileArguments, each place OpenTofu reads it (a
// terraform_remote_state's config, a key_provider, TF_ENCRYPTION, a pull
// request's root backend) in each syntax and file kind, and checks that
// the scan finds it exactly when the table says its file can run a
// program. The break it guards: the scan knew the s3 backend's plural
// shared_credentials_files but not the singular OpenTofu also accepts,
// and a remote state spelled that way planned unheld.
func TestScanFindsEveryArgumentThatRunsAProgramInEveryForm(t *testing.T) {
	for _, a := range fileArguments {
		var cases map[string]map[string]string
		switch a.kind {
		case "backend":
			cases = remoteStateForms(a.typ, a.name)
		case "key_provider":
			cases = keyProviderForms(a.typ, a.name)
		}
		for form, files := range cases {
			r := scanTree(t, writeTree(t, files))
			if got := len(r.Findings) > 0; got != a.runs {
				t.Errorf("%s %s %s in %s: found %v, want %v:\n%s", a.kind, a.typ, a.name, form, got, a.runs, allReasons(r.Findings))
			}
			if a.runs && len(r.Findings) == 1 && !strings.Contains(r.Findings[0].Reason, a.name) {
				t.Errorf("%s %s %s in %s: the reason does not name the argument: %s", a.kind, a.typ, a.name, form, r.Findings[0].Reason)
			}
		}
		if a.kind == "key_provider" {
			v, jv := argValue(a.name)
			for _, env := range []string{
				fmt.Sprintf("key_provider %q \"k\" {\n  %s = %s\n}\n", a.typ, a.name, v),
				fmt.Sprintf(`{"key_provider": {%q: {"k": {%q: %s}}}}`, a.typ, a.name, jv),
			} {
				root := writeTree(t, map[string]string{"main.tf": ""})
				r := scanOpts(t, Options{Root: root, Dir: root, Encryption: env})
				if got := len(r.Findings) > 0; got != a.runs {
					t.Errorf("TF_ENCRYPTION=%s: found %v, want %v:\n%s", env, got, a.runs, allReasons(r.Findings))
				}
			}
			continue
		}
		for form, files := range rootBackendForms(a.typ, a.name) {
			root := writeTree(t, files)
			if r := scanTree(t, root); len(r.Findings) > 0 {
				t.Errorf("backend %s %s in %s outside a pull request: the checkout's own backend is trusted, but found:\n%s", a.typ, a.name, form, allReasons(r.Findings))
			}
			r := scanOpts(t, Options{Root: root, Dir: root, PullRequest: true})
			if got := len(r.Findings) > 0; got != a.runs {
				t.Errorf("backend %s %s in a pull request's %s: found %v, want %v:\n%s", a.typ, a.name, form, got, a.runs, allReasons(r.Findings))
			}
		}
	}
}

// s3RemoteState is the reproduction: a terraform_remote_state whose s3
// backend takes its credentials from ./aws-credentials under the singular
// spelling (key is how the config writes the argument), pointed at a port
// nothing listens on.
func s3RemoteState(key string) string {
	return fmt.Sprintf(`data "terraform_remote_state" "s" {
  backend = "s3"
  config = {
    bucket                      = "b"
    key                         = "k"
    region                      = "us-east-1"
    %s = "./aws-credentials"
    profile                     = "p"
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
    max_retries                 = 1
    endpoints                   = { s3 = "http://127.0.0.1:1" }
  }
}
`, key)
}

// TestScanFindsTheSingularSharedCredentialsFileOfARemoteState is the
// reproduction and its neighbours, written out rather than taken from
// fileArguments: the singular spelling, a key built by a template in the
// native and the JSON syntax (OpenTofu evaluates a JSON key as a
// template), a key the scan cannot evaluate, a backend that is not a plain
// string. The break it guards: the singular spelling gave "no finding"
// and its credential_process ran at plan, as the server's user.
func TestScanFindsTheSingularSharedCredentialsFileOfARemoteState(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string // in the reason
	}{
		"singular":            {map[string]string{"main.tf": s3RemoteState("shared_credentials_file")}, "names shared_credentials_file"},
		"native template key": {map[string]string{"main.tf": s3RemoteState(`"${"shared_credentials"}_file"`)}, "names shared_credentials_file"},
		"json template key": {map[string]string{"main.tf.json": `{"data": {"terraform_remote_state": {"s": {"backend": "s3",
			"config": {"bucket": "b", "${\"shared_credentials\"}_file": "./aws-credentials"}}}}}`}, "names shared_credentials_file"},
		"json key from a variable": {map[string]string{"main.tf.json": `{"variable": {"k": {"default": "shared_credentials_file"}},
			"data": {"terraform_remote_state": {"s": {"backend": "s3", "config": {"${var.k}": "./aws-credentials"}}}}}`}, "config key the scan cannot read"},
		"parenthesized key": {map[string]string{"main.tf": `locals { k = "shared_credentials_file" }
data "terraform_remote_state" "s" {
  backend = "s3"
  config = { (local.k) = "./aws-credentials" }
}`}, "config key the scan cannot read"},
		"backend from a variable": {map[string]string{"main.tf": `variable "b" { default = "s3" }
data "terraform_remote_state" "s" {
  backend = var.b
  config = { shared_credentials_file = "./aws-credentials" }
}`}, "names shared_credentials_file"},
		"in a .tofu file of a module": {map[string]string{"main.tf": `module "m" { source = "./m" }`,
			"m/x.tf": `data "terraform_remote_state" "s" { backend = "local" }`, "m/x.tofu": s3RemoteState("shared_credentials_file")}, "names shared_credentials_file"},
	} {
		r := scanTree(t, writeTree(t, tc.files))
		if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Reason, tc.want) || !strings.HasSuffix(r.Findings[0].Address, "data.terraform_remote_state.s") {
			t.Errorf("%s: want one finding for data.terraform_remote_state.s saying %q, got:\n%s", name, tc.want, allReasons(r.Findings))
		}
	}
	// OpenTofu's attribute names are case-sensitive: it refuses this
	// spelling (TestTofuRunsTheCredentialProcessOfEverySpellingItAccepts),
	// so nothing runs and it is no finding; the oss backend's singular
	// names a file it only reads.
	for _, src := range []string{
		s3RemoteState("Shared_Credentials_File"),
		`data "terraform_remote_state" "s" {
  backend = "oss"
  config = { shared_credentials_file = "./aliyun.json" }
}`,
	} {
		if r := scanTree(t, writeTree(t, map[string]string{"main.tf": src})); len(r.Findings) != 0 {
			t.Errorf("found:\n%s\nin:\n%s", allReasons(r.Findings), src)
		}
	}
}

// TestScanFindsAPullRequestsRootBackendNamingACredentialsFile: a pull
// request's root backend must be the checkout's, as written, but a
// relative credentials file or kubeconfig it names is read from the
// branch's tree at init, so the branch chooses the program its
// credential_process or exec plugin runs. The break it guards: the scan
// read no backend block, and the block's text matching the checkout's was
// all that was compared.
func TestScanFindsAPullRequestsRootBackendNamingACredentialsFile(t *testing.T) {
	for name, src := range map[string]string{
		"s3 singular":       "terraform {\n  backend \"s3\" {\n    bucket = \"b\"\n    shared_credentials_file = \"./aws-credentials\"\n  }\n}\n",
		"s3 config files":   "terraform {\n  backend \"s3\" {\n    shared_config_files = [\"/etc/aws/config\"]\n  }\n}\n",
		"kubernetes":        "terraform {\n  backend \"kubernetes\" {\n    config_path = \"./kc.yaml\"\n    secret_suffix = \"x\"\n  }\n}\n",
		"kubernetes exec":   "terraform {\n  backend \"kubernetes\" {\n    exec {\n      api_version = \"v1\"\n      command = \"./token.sh\"\n    }\n  }\n}\n",
		"exec as attribute": "terraform {\n  backend \"kubernetes\" {\n    exec = { command = \"./token.sh\" }\n  }\n}\n",
		"gcs credentials":   "terraform {\n  backend \"gcs\" {\n    bucket = \"b\"\n    credentials = \"./sa.json\"\n  }\n}\n",
	} {
		root := writeTree(t, map[string]string{"backend.tf": src, "main.tf": `resource "terraform_data" "r" {}`})
		if r := scanTree(t, root); len(r.Findings) != 0 {
			t.Errorf("%s: outside a pull request the checkout's backend is trusted, but found:\n%s", name, allReasons(r.Findings))
		}
		r := scanOpts(t, Options{Root: root, Dir: root, PullRequest: true})
		if len(r.Findings) != 1 || !strings.HasPrefix(r.Findings[0].Address, "terraform.backend.") || r.Findings[0].File != "backend.tf" || r.Findings[0].Line != 2 {
			t.Errorf("%s: want one finding for the backend at backend.tf:2, got:\n%s", name, brief(r.Findings)+allReasons(r.Findings))
		}
	}
	// A backend in a called module is ignored by OpenTofu (it warns), so
	// init reads nothing it names; and an s3 backend naming only its CA
	// bundle names nothing that runs.
	root := writeTree(t, map[string]string{
		"main.tf":    "module \"m\" { source = \"./m\" }\nterraform {\n  backend \"s3\" {\n    custom_ca_bundle = \"./ca.pem\"\n  }\n}\n",
		"m/main.tf":  "terraform {\n  backend \"kubernetes\" {\n    config_path = \"./kc.yaml\"\n  }\n}\n",
		"m/other.tf": `resource "terraform_data" "r" {}`,
	})
	if r := scanOpts(t, Options{Root: root, Dir: root, PullRequest: true}); len(r.Findings) != 0 {
		t.Errorf("found:\n%s", allReasons(r.Findings))
	}
}
