package server

import (
	"errors"
	"net"

	"charm.land/ssh"

	"github.com/switchtender/switchtender/server/sshd/identity"
)

// Identify maps a public key or certificate to a user or agent in the
// configuration in force, or says why it maps to none (a
// *identity.Refusal). remote is the client's address, checked against a
// certificate's source-address (nil skips that check).
func (s *Server) Identify(key ssh.PublicKey, remote net.Addr) (Identity, error) {
	return s.ids.Identify(s.config(), key, remote) // one configuration for every look (Reload swaps it)
}

// current returns who as the configuration says now: a session stays open
// across a reload, and each act is judged by the identity its key or
// certificate (or, without one, its name) has in the configuration in
// force, with the roles it has there now. A key the configuration no
// longer has, a certificate that expired, was revoked or whose CA is gone
// is refused with the reason. The schedule's own identity is the server's
// and passes as it is.
func (s *Server) current(who Identity) (Identity, error) {
	if who.Name == scheduleIdentity.Name && who.Key == nil || who.Forge && who.Key == nil {
		return who, nil
	}
	cfg := s.config()
	if who.Key != nil {
		now, err := s.ids.Identify(cfg, who.Key, nil)
		if ref := (*identity.Refusal)(nil); errors.As(err, &ref) && ref.KeyID != "" {
			return Identity{}, errorf(ErrForbidden, "%s; nothing was done. Get a new certificate and connect again", ref.Error())
		}
		if err != nil || now.Name != who.Name {
			return Identity{}, errorf(ErrForbidden, "the key this session connected with no longer belongs to %s (the configuration was reloaded); nothing was done. Connect again", who.Name)
		}
		return now, nil
	}
	if who.Agent {
		if _, ok := cfg.Agents[who.Name]; !ok {
			return Identity{}, errorf(ErrForbidden, "agent %s is no longer configured (the configuration was reloaded); nothing was done", who.Name)
		}
		return Identity{Name: who.Name, Agent: true}, nil
	}
	u, ok := cfg.Users[who.Name]
	if !ok {
		return Identity{}, errorf(ErrForbidden, "user %s is no longer configured (the configuration was reloaded); nothing was done", who.Name)
	}
	return Identity{Name: who.Name, Roles: u.Roles}, nil
}
