package scenario

// A control node whose project is a clone of a repository on a real Gitea
// on loopback, with Gitea's webhook pointed at the node's webhook_listen
// through a relay that keeps every delivery, so a test can send one again.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// forgeSecret is the webhook secret of the forge tests.
const forgeSecret = "forge-test-webhook-secret-0123"

// forgeMain is the repository's first commit: a working directory whose
// configuration changes nothing, a local module, and a .gitignore keeping
// what init and the local state write out of the tree.
var forgeMain = map[string]string{
	".gitignore":             ".terraform/\n*.tfstate\n*.tfstate.backup\n.terraform.lock.hcl\n",
	"network/main.tf":        "module \"vpc\" {\n  source = \"../modules/vpc\"\n}\n",
	"modules/vpc/main.tf":    "resource \"terraform_data\" \"vpc\" {\n  input = \"vpc\"\n}\n",
	"unrelated/README.md":    "not configuration\n",
	"modules/vpc/outputs.tf": "output \"id\" {\n  value = terraform_data.vpc.id\n}\n",
}

// forgeHarness is a harness whose project "platform" is a clone of
// root/infra on g, planned for pull requests by template "network".
type forgeHarness struct {
	*harness
	g      *testkit.Gitea
	repo   string
	alice  *testkit.GiteaUser // a collaborator who may push
	relay  *deliveryRelay
	hookID int64
}

// writeForgeHarness starts Gitea, the repository with forgeMain on main, a
// clone of it as the project's checkout, and writes a control node's
// configuration with a forge block for Gitea and webhook_listen on a free
// port; Gitea's webhook goes to the relay, which passes deliveries on once
// startNode (or sendTo) names where.
func writeForgeHarness(t *testing.T) *forgeHarness {
	t.Helper()
	return writeForgeHarnessVia(t, nil)
}

// writeForgeHarnessVia is writeForgeHarness whose node reaches Gitea's API
// through clock's proxy (nil: directly).
func writeForgeHarnessVia(t testing.TB, clock *statusClock) *forgeHarness {
	t.Helper()
	g := testkit.StartGitea(t)
	repo := g.CreateRepo(g.Admin.Name, "infra")
	g.PushToBranch(g.Admin, repo, "main", forgeMain, "The network")
	alice := g.CreateUser("alice")
	g.AddCollaborator(repo, alice.Name, "write")
	checkout := g.Clone(g.Admin, repo, "main")
	extra := fmt.Sprintf(`
forge "corp" {
  type           = "gitea"
  url            = %q
  token          = %q
  webhook_secret = %q
  poll_every     = "1h"
}
project "platform" {
  path       = %q
  forge      = "corp"
  repository = %q
}
template "network" {
  project       = "platform"
  command       = "network"
  pull_requests = true
}
`, apiURL(t, g, clock), g.Admin.Token, forgeSecret, checkout, repo)
	h := writeHarness(t, "  webhook_listen = \"127.0.0.1:0\"\n", extra)
	f := &forgeHarness{harness: h, g: g, repo: repo, alice: alice, relay: newDeliveryRelay(t, "")}
	f.hookID = g.AddWebhook(repo, f.relay.URL, forgeSecret, "pull_request_only", "pull_request_sync", "pull_request_comment")
	return f
}

// apiURL is where the node reaches g's API: through clock when set.
func apiURL(t testing.TB, g *testkit.Gitea, clock *statusClock) string {
	if clock == nil {
		return g.URL
	}
	return clock.wrap(t, g.URL)
}

// newForgeHarness is writeForgeHarness with the node started and the
// relay passing deliveries to it.
func newForgeHarness(t *testing.T) *forgeHarness {
	t.Helper()
	f := writeForgeHarness(t)
	f.startNode()
	return f
}

// startNode starts the control node (again) and points the relay at its
// webhook_listen.
func (f *forgeHarness) startNode() {
	f.t.Helper()
	f.start()
	f.relay.sendTo("http://" + f.srv.WebhookAddr() + "/webhooks/corp")
}

// openPR pushes branch with files from main as alice and opens its pull
// request, returning its number and head.
func (f *forgeHarness) openPR(branch string, files map[string]string) (int, string) {
	f.t.Helper()
	head := f.g.CreateBranchAndPush(f.alice, f.repo, "main", branch, files, "Change "+branch)
	return f.g.OpenPR(f.alice, f.repo, branch, "main", "Change "+branch), head
}

// waitStatus waits until sha has a status of context in state and returns
// its description.
func (f *forgeHarness) waitStatus(sha, context, state string) string {
	f.t.Helper()
	var last []testkit.GiteaStatus
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		last = f.g.ListStatuses(f.repo, sha)
		for _, s := range last {
			if s.Context == context {
				if s.State == state {
					return s.Description
				}
				break // the newest of the context is not it yet
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.t.Fatalf("no %s status %q on %s; statuses %+v\nruns: %s", context, state, sha, last, f.runsSummary())
	return ""
}

// comments are the pull request's comments Switchtender wrote.
func (f *forgeHarness) comments(n int) []testkit.GiteaComment {
	var out []testkit.GiteaComment
	for _, c := range f.g.ListComments(f.repo, n) {
		if strings.HasPrefix(c.Body, forge.CommentMarker) {
			out = append(out, c)
		}
	}
	return out
}

// waitComment waits until the pull request's one comment holds every one
// of want, and returns it.
func (f *forgeHarness) waitComment(n int, want ...string) string {
	f.t.Helper()
	var body string
	waitFor(f.t, "the pull request's comment to say "+strings.Join(want, ", "), 3*time.Minute, func() bool {
		cs := f.comments(n)
		if len(cs) != 1 {
			return false
		}
		body = cs[0].Body
		for _, w := range want {
			if !strings.Contains(body, w) {
				return false
			}
		}
		return true
	})
	return body
}

// prRuns lists the node's runs of pull request n, newest first.
func (f *forgeHarness) prRuns(n int) []store.Run {
	runs, err := f.db().ListRuns()
	if err != nil {
		f.t.Fatal(err)
	}
	var out []store.Run
	for _, r := range runs {
		if r.PullRequest != nil && r.PullRequest.Number == n {
			out = append(out, r)
		}
	}
	return out
}

// runsSummary is every run in one line each, for a failure's message.
func (f *forgeHarness) runsSummary() string {
	runs, _ := f.db().ListRuns()
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "\n  run %s %s %s %s: %s", r.ID, r.Template, r.Kind, r.Status, r.Message)
	}
	ds, _ := f.db().ForgeDeliveries()
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  delivery %s: %s", d.DeliveryID, d.Outcome)
	}
	return b.String()
}

// showJSON is `show id --json` as a map.
func (f *forgeHarness) showJSON(id string) map[string]any {
	f.t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(f.mustSSH("alice", "show", id, "--json")), &v); err != nil {
		f.t.Fatal(err)
	}
	return v
}

// deliveryRelay passes each delivery on to the node, keeping a copy.
type deliveryRelay struct {
	*httptest.Server
	mu   sync.Mutex
	to   string
	kept []keptDelivery
}

// sendTo makes the relay pass deliveries to url from now on.
func (d *deliveryRelay) sendTo(url string) {
	d.mu.Lock()
	d.to = url
	d.mu.Unlock()
}

// keptDelivery is one delivery as the relay passed it on, and the node's
// answer.
type keptDelivery struct {
	Header             http.Header
	Body               []byte
	Code               int
	Received, Answered time.Time // when the relay got it, and when the node answered
}

func newDeliveryRelay(t testing.TB, to string) *deliveryRelay {
	d := &deliveryRelay{to: to}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		at := time.Now()
		code := d.send(r.Header, body)
		d.mu.Lock()
		d.kept = append(d.kept, keptDelivery{r.Header.Clone(), body, code, at, time.Now()})
		d.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(d.Close)
	return d
}

// send posts body with header to the node and returns its status code
// (0 when it did not answer).
func (d *deliveryRelay) send(header http.Header, body []byte) int {
	d.mu.Lock()
	to := d.to
	d.mu.Unlock()
	if to == "" {
		return http.StatusServiceUnavailable
	}
	req, err := http.NewRequest(http.MethodPost, to, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitKept waits for a delivery the relay passed on that match accepts.
func (d *deliveryRelay) waitKept(t testing.TB, what string, match func(keptDelivery) bool) keptDelivery {
	t.Helper()
	var got keptDelivery
	waitFor(t, what, 2*time.Minute, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, k := range d.kept {
			if match(k) {
				got = k
				return true
			}
		}
		return false
	})
	return got
}

// projectPath is the checkout of project "platform".
func (f *forgeHarness) projectPath() string { return f.srv.Config().Projects["platform"].Path }
