package forge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// route is one recorded response a fakeForge replays: the first route
// whose method, path and query match a request answers it.
type route struct {
	method string
	path   string            // escaped, as the client sends it ("/api/v4/projects/octocat%2FHello-World")
	query  map[string]string // parameters the request must carry; others may be there too
	status int               // 0 is 200
	file   string            // the body, under testdata/api/
	body   string            // the body, when there is no file
	header map[string]string // response headers; "{base}" stands for the fake's URL
}

// call is one request a fakeForge received.
type call struct {
	Method string
	Path   string // escaped
	Query  url.Values
	Auth   string         // the value of the forge's token header
	Body   map[string]any // the JSON body, when there is one
	Routed bool           // a route answered it (else: 404)
}

func (c call) String() string { return c.Method + " " + c.Path + "?" + c.Query.Encode() }

// fakeForge is a local forge API: it answers from a table of routes and
// records every call, so a test checks what a client sent as well as what
// it made of the answers.
type fakeForge struct {
	srv        *httptest.Server
	authHeader string
	routes     []route

	mu       sync.Mutex
	calls    []call
	failCode int // when not 0, every request is refused with it
}

// newFakeForge starts a fake answering from routes, whose calls carry the
// token in authHeader; it stops when the test ends.
func newFakeForge(t *testing.T, authHeader string, routes []route) *fakeForge {
	t.Helper()
	f := &fakeForge{authHeader: authHeader, routes: routes}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// failWith makes every later request refused with code and a message that
// echoes the credentials the request carried, as a careless server might.
func (f *fakeForge) failWith(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failCode = code
}

func (f *fakeForge) serve(w http.ResponseWriter, r *http.Request) {
	c := call{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Auth: r.Header.Get(f.authHeader)}
	if raw, _ := io.ReadAll(r.Body); len(raw) > 0 {
		if err := json.Unmarshal(raw, &c.Body); err != nil {
			c.Body = map[string]any{"(not JSON)": string(raw)}
		}
	}
	f.mu.Lock()
	failCode := f.failCode
	rt, ok := f.match(c)
	c.Routed = ok && failCode == 0
	f.calls = append(f.calls, c)
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	switch {
	case failCode != 0:
		msg, _ := json.Marshal(map[string]string{"message": "bad credentials: " + r.Header.Get(f.authHeader)})
		w.WriteHeader(failCode)
		_, _ = w.Write(msg)
	case !ok:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"the fake forge has no route for this call"}`)
	default:
		f.answer(w, rt)
	}
}

// match returns the first route answering c.
func (f *fakeForge) match(c call) (route, bool) {
	for _, rt := range f.routes {
		if rt.method != c.Method || rt.path != c.Path {
			continue
		}
		matches := true
		for k, v := range rt.query {
			matches = matches && c.Query.Get(k) == v
		}
		if matches {
			return rt, true
		}
	}
	return route{}, false
}

// answer writes rt's recorded response.
func (f *fakeForge) answer(w http.ResponseWriter, rt route) {
	body := []byte(rt.body)
	if rt.file != "" {
		var err error
		if body, err = os.ReadFile(filepath.Join("testdata", "api", rt.file)); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"message":"the fake forge cannot read its recording"}`)
			return
		}
	}
	for k, v := range rt.header {
		w.Header().Set(k, strings.ReplaceAll(v, "{base}", f.srv.URL))
	}
	status := rt.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// all returns every call received so far, in order.
func (f *fakeForge) all() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// callsTo returns the calls received to op, "METHOD path".
func (f *fakeForge) callsTo(op string) []call {
	var out []call
	for _, c := range f.all() {
		if c.Method+" "+c.Path == op {
			out = append(out, c)
		}
	}
	return out
}

// query is a route's query parameters, given as name, value, name, value.
func query(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// nextPage is the Link header pointing at the next page, at path?rawQuery
// on the fake (GitHub's and Gitea's pagination).
func nextPage(pathAndQuery string) map[string]string {
	return map[string]string{"Link": `<{base}` + pathAndQuery + `>; rel="next"`}
}
