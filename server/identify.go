package server

import (
	"charm.land/ssh"
)

// Identify maps a public key to a configured user or agent in the
// configuration in force; false when none has it.
func (s *Server) Identify(key ssh.PublicKey) (Identity, bool) {
	if key == nil {
		return Identity{}, false
	}
	cfg := s.config() // one configuration for both looks (Reload swaps it)
	name, agent, ok := cfg.Identify(key)
	if !ok {
		return Identity{}, false
	}
	id := Identity{Name: name, Agent: agent, Key: key}
	if !agent {
		id.Roles = cfg.Users[name].Roles
	}
	return id, true
}

// current returns who as the configuration says now: a session stays open
// across a reload, and each act is judged by the identity its key (or,
// without one, its name) has in the configuration in force, with the roles
// it has there. A key or name the configuration no longer has is refused.
// The schedule's own identity is the server's and passes as it is.
func (s *Server) current(who Identity) (Identity, error) {
	if who.Name == scheduleIdentity.Name && who.Key == nil || who.Forge && who.Key == nil {
		return who, nil
	}
	cfg := s.config()
	if who.Key != nil {
		now, ok := s.Identify(who.Key)
		if !ok || now.Name != who.Name {
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
