// Package identity is the front door's answer to "who is this?": it maps
// the key or OpenSSH certificate a client proved over SSH to an identity
// under the configuration in force (docs/identity.md). A listed public key
// is the user or agent that lists it; a user certificate signed by a
// user_ca's key is the person its key ID names, in the groups its
// principals grant. The door asks at login; the service asks again before
// every approve, reject, launch and cancel, so a certificate that expired,
// was revoked or lost its CA in a reload can no longer act.
package identity

import (
	"fmt"
	"net"
	"slices"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
	gossh "golang.org/x/crypto/ssh"
)

// Reasons a key or certificate is refused (Refusal.Reason); each is also
// the reason label of switchtender_ssh_refused_total.
const (
	ReasonUnknownKey    = "unknown_key"                // a plain key no user, agent or worker lists
	ReasonUnknownCA     = "certificate_unknown_ca"     // signed by a key no user_ca block holds
	ReasonExpired       = "certificate_expired"        // past its valid-before
	ReasonNotYetValid   = "certificate_not_yet_valid"  // before its valid-after
	ReasonRevoked       = "certificate_revoked"        // its serial, key ID or key is in the CA's KRL (or the KRL cannot be read)
	ReasonHostCert      = "certificate_host"           // a host certificate presented as a user's
	ReasonOption        = "certificate_option"         // a critical option Switchtender does not honour
	ReasonSourceAddress = "certificate_source_address" // connected from outside its source-address
	ReasonInvalid       = "certificate_invalid"        // a bad signature, no principal, or a key ID that cannot name a person
)

// Refusal is why a key or certificate identifies no one. Error reads as a
// sentence for the operator log.
type Refusal struct {
	Reason      string // one of the Reason constants
	Fingerprint string // SHA256 fingerprint of the key (the certified key, for a certificate)
	KeyID       string // the certificate's key ID; "" for a plain key
	Serial      uint64 // the certificate's serial
	CA          string // the user_ca block that signed it, when one did
	Detail      string // what is wrong, for people ("expired at 2026-12-03T21:00:00Z")
}

func (r *Refusal) Error() string {
	if r.KeyID == "" && r.CA == "" && r.Reason == ReasonUnknownKey {
		return fmt.Sprintf("the key %s is not configured for any user or agent", r.Fingerprint)
	}
	return fmt.Sprintf("certificate %q (serial %d, key %s) is refused: %s", r.KeyID, r.Serial, r.Fingerprint, r.Detail)
}

// Resolver maps keys and certificates to identities. It keeps what it read
// of each user_ca's revocation list, reading the file again when it
// changes. The zero value is not usable; make one with NewResolver. It is
// safe for concurrent use.
type Resolver struct{}

// NewResolver returns a Resolver with nothing read yet.
func NewResolver() *Resolver { return &Resolver{} }

// Identify returns who key proves under cfg now, or a *Refusal. remote is
// the client's address, checked against a certificate's source-address; nil
// skips that check (a re-check within a connection whose address was
// checked at login).
func (r *Resolver) Identify(cfg *config.Config, key gossh.PublicKey, remote net.Addr) (api.Identity, error) {
	if key == nil {
		return api.Identity{}, &Refusal{Reason: ReasonUnknownKey, Detail: "no key"}
	}
	if cert, ok := key.(*gossh.Certificate); ok {
		return r.certificate(cfg, cert, remote)
	}
	return listed(cfg, key)
}

// listed is the identity a plain key has: the user or agent that lists it,
// with the user's roles and those of the groups listing them.
func listed(cfg *config.Config, key gossh.PublicKey) (api.Identity, error) {
	fp := gossh.FingerprintSHA256(key)
	name, agent, ok := cfg.Identify(key)
	if !ok {
		return api.Identity{}, &Refusal{Reason: ReasonUnknownKey, Fingerprint: fp}
	}
	id := api.Identity{Name: name, Agent: agent, Key: key, Credential: &store.Credential{Fingerprint: fp}}
	if !agent {
		addUser(cfg, &id)
	}
	return id, nil
}

// addUser adds what the configuration grants user id.Name: its user
// block's roles and its groups' memberships and roles.
func addUser(cfg *config.Config, id *api.Identity) {
	if u := cfg.Users[id.Name]; u != nil {
		addRoles(id, u.Roles)
	}
	for _, g := range cfg.GroupsOfUser(id.Name) {
		id.Groups = append(id.Groups, api.Group{Name: g, From: api.GroupFromConfiguration})
		addRoles(id, cfg.Groups[g].Roles)
	}
}

func addRoles(id *api.Identity, roles []string) {
	for _, r := range roles {
		if !slices.Contains(id.Roles, r) {
			id.Roles = append(id.Roles, r)
		}
	}
}

// certificate is the identity a user certificate proves. Not yet built:
// every certificate is refused.
func (r *Resolver) certificate(cfg *config.Config, cert *gossh.Certificate, remote net.Addr) (api.Identity, error) {
	return api.Identity{}, &Refusal{Reason: ReasonUnknownCA, Fingerprint: gossh.FingerprintSHA256(cert.Key), KeyID: cert.KeyId, Serial: cert.Serial, Detail: "certificates are not accepted yet"}
}
