package sshd

import (
	"context"
	"fmt"
	"strings"

	"charm.land/ssh"
	"github.com/switchtender/switchtender/server/api"
	gossh "golang.org/x/crypto/ssh"
)

var whoamiCommand = command{
	name:    "whoami",
	example: `ssh -p 2222 HOST whoami --json`,
	usage:   "whoami [--json]",
	summary: "who the server takes you for: name, kind, roles and key fingerprint",
	help: `The identity your SSH key maps to (the key decides who you are, not the
SSH user name): its name, whether it is a person or an agent, its roles
(launch, approve; an agent holds none but may launch) and the SHA256
fingerprint of the key you connected with.

--json: {"name", "kind", "roles", "key_fingerprint"}.`,
	json: true,
	bind: noFlags((*call).whoami),
}

// WhoamiView is what whoami prints.
type WhoamiView struct {
	Name           string   `json:"name"`
	Kind           string   `json:"kind"`
	Roles          []string `json:"roles"`
	KeyFingerprint string   `json:"key_fingerprint"`
}

// whoami prints the caller's identity.
func (c *call) whoami() int {
	v := WhoamiView{Name: c.id.Name, Kind: api.RequesterPerson, Roles: api.OrEmpty(c.id.Roles), KeyFingerprint: keyFingerprint(c.ctx)}
	if c.id.Agent {
		v.Kind = api.RequesterAgent
	}
	if c.json {
		return writeJSON(c.out, v)
	}
	roles := strings.Join(v.Roles, ", ")
	if roles == "" {
		roles = "none"
		if c.id.Agent {
			roles = "none (an agent may launch; what it applies waits for a person)"
		}
	}
	fp := v.KeyFingerprint
	if fp == "" {
		fp = "(unknown)"
	}
	fmt.Fprintf(c.out, "name:  %s\nkind:  %s\nroles: %s\nkey:   %s\n", v.Name, v.Kind, roles, fp)
	return exitOK
}

// keyFingerprintKey is the context key of the caller's key fingerprint.
type keyFingerprintKey struct{}

// withKeyOf returns ctx carrying the SHA256 fingerprint of the session's
// public key, for whoami.
func withKeyOf(ctx context.Context, sess ssh.Session) context.Context {
	if k := sess.PublicKey(); k != nil {
		return context.WithValue(ctx, keyFingerprintKey{}, gossh.FingerprintSHA256(k))
	}
	return ctx
}

// keyFingerprint returns the fingerprint withKeyOf stored, or "".
func keyFingerprint(ctx context.Context) string {
	fp, _ := ctx.Value(keyFingerprintKey{}).(string)
	return fp
}
