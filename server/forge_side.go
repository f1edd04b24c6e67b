package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// The forge side (docs/forges.md): a receiver that verifies a forge's
// webhook deliveries and stores them before it answers, a processor that
// acts on the stored deliveries one at a time in the order received (plans
// a pull request's newest head, supersedes older heads, proposes the apply
// a merge asks for), a reporter that keeps each pull request's one comment
// and its commit statuses in step with its runs, and a poll that catches up
// on deliveries that never came. Package forge knows the forges; this file
// and its siblings know the runs.

// forgeIdentity is who the server acts as on the forge side: the audit
// trail's actor of what it does on a delivery.
const forgeIdentity = "switchtender"

// forgeSide is the server's part of the forge integration; nil-safe
// methods do nothing when no forge is configured.
type forgeSide struct {
	s    *Server
	wake chan struct{} // a delivery was stored, or a retry is due
	dirt chan struct{} // a pull request needs reporting

	mu      sync.Mutex
	dirty   map[string]pullRef       // string(store.PullKey) -> the pull request to report
	clients map[*config.Forge]client // by the configuration's forge block (a reload makes new ones)
	posted  map[string]string        // "repo sha context" -> the state and description last posted
	bodies  map[string]string        // string(store.PullKey) -> the comment body last posted
	self    map[*config.Forge]string // the login each forge's token authenticates as
	tokens  []string                 // the tokens token_command printed: scrubbed like the file's secrets
}

// pullRef names one pull request.
type pullRef struct {
	Forge, Repository string
	Number            int
}

func (p pullRef) key() string { return string(store.PullKey(p.Forge, p.Repository, p.Number)) }

// client is a forge client with the token it was made with.
type client struct {
	forge.Client
	header string // the HTTP Authorization header git fetches with
}

func newForgeSide(s *Server) *forgeSide {
	return &forgeSide{s: s, wake: make(chan struct{}, 1), dirt: make(chan struct{}, 1),
		dirty: map[string]pullRef{}, clients: map[*config.Forge]client{}, posted: map[string]string{},
		bodies: map[string]string{}, self: map[*config.Forge]string{}}
}

// kick wakes the processor.
func (f *forgeSide) kick() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// start runs the processor, the reporter and each forge's poll until ctx
// ends; deliveries stored before a restart are processed first.
// They run whatever the configuration holds now, so forge blocks a reload
// adds are served from then on (the receiver's listener, like the rest of
// the server block, needs a restart).
func (f *forgeSide) start(ctx context.Context) {
	go f.processLoop(ctx)
	go f.reportLoop(ctx)
	go f.pollLoop(ctx)
	f.kick()
	f.markOpenPulls()
}

// client returns the API client of forge block fc, made once per block
// with its token (token_command is run then).
func (f *forgeSide) client(ctx context.Context, fc *config.Forge) (client, error) {
	f.mu.Lock()
	c, ok := f.clients[fc]
	f.mu.Unlock()
	if ok {
		return c, nil
	}
	token, err := f.token(ctx, fc)
	if err != nil {
		return client{}, err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	fcl, err := forge.New(forge.Type(fc.Type), fc.URL, token, hc)
	if err != nil {
		return client{}, fmt.Errorf("forge %q: %w", fc.Name, err)
	}
	c = client{Client: fcl, header: authHeader(forge.Type(fc.Type), token)}
	f.mu.Lock()
	f.clients[fc] = c
	f.mu.Unlock()
	return c, nil
}

// token is forge block fc's token: as written, or its token_command's
// trimmed output, run as a command credential is.
func (f *forgeSide) token(ctx context.Context, fc *config.Forge) (string, error) {
	if len(fc.TokenCommand) == 0 {
		return fc.Token, nil
	}
	v, err := f.s.runCredentialCommand(ctx, &config.Credential{Name: "forge " + fc.Name, Command: fc.TokenCommand}, "forge-"+fc.Name)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	f.tokens = append(f.tokens, v)
	f.mu.Unlock()
	return v, nil
}

// scrub is Server.scrub that also masks every token a token_command
// printed (the file's own secrets the server's scrubber masks already).
func (f *forgeSide) scrub(text string) string {
	text = f.s.scrub(text)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.tokens {
		if t != "" {
			text = strings.ReplaceAll(text, t, "***")
		}
	}
	return text
}

// authHeader is the HTTP header git sends to fetch from forge type t with
// token: a bearer token for GitHub and Gitea's "token" scheme, GitLab's
// basic user oauth2.
func authHeader(t forge.Type, token string) string {
	switch t {
	case forge.GitLab:
		return "Authorization: Basic " + basic("oauth2", token)
	case forge.GitHub:
		return "Authorization: Basic " + basic("x-access-token", token)
	}
	return "Authorization: token " + token
}

// selfLogin is the login forge block fc's token acts as ("" when the forge
// cannot say; then no delivery is recognised as the server's own).
func (f *forgeSide) selfLogin(ctx context.Context, fc *config.Forge, c client) string {
	f.mu.Lock()
	login, ok := f.self[fc]
	f.mu.Unlock()
	if ok {
		return login
	}
	login, err := c.Self(ctx)
	if err != nil {
		f.s.log.Warn("forge: reading the login the token acts as", "forge", fc.Name, "err", f.scrub(err.Error()))
		return ""
	}
	f.mu.Lock()
	f.self[fc] = login
	f.mu.Unlock()
	return login
}

// projectFor is the project that names repository on forge block name, or
// nil.
func (s *Server) projectFor(name, repository string) *config.Project {
	for _, p := range s.config().Projects {
		if p.Forge == name && strings.EqualFold(p.Repository, repository) {
			return p
		}
	}
	return nil
}

// basic is the value of an HTTP basic Authorization header.
func basic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
