package config

import (
	"filippo.io/age"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"golang.org/x/crypto/ssh"
)

func (p *parser) pool(b *hcl.Block, name string) *Pool {
	c := p.content(b, poolSchema)
	pl := &Pool{Name: name, Line: p.line(b.DefRange)}
	good := true
	if v, a, ok := p.str(c, "delivery_key"); ok {
		v = strings.TrimSpace(v)
		if _, err := age.ParseX25519Recipient(v); err != nil {
			p.errorf(a.Expr.Range(), "Invalid delivery key",
				"pool %q delivery_key is not an age recipient (\"age1...\"): plans and secrets are sealed to one; make it with `switchtender keygen pool --out FILE` and give the recipient it prints", name)
			good = false
		}
		pl.DeliveryKey = v
	} else if a != nil {
		good = false
	}
	if rs, a, ok := p.strList(c, "workers"); ok {
		for _, r := range rs {
			k, ok := p.publicKey(r, fmt.Sprintf("pool %q", name))
			if !ok {
				good = false
				continue
			}
			pl.Workers = append(pl.Workers, r.name)
			pl.WorkerKeys = append(pl.WorkerKeys, k)
		}
	} else if a != nil {
		good = false
	}
	if d, a, ok := p.duration(c, "lease_timeout"); ok {
		if d < time.Second {
			p.errorf(a.Expr.Range(), "Invalid lease_timeout", "pool %q lease_timeout is %s; give at least \"1s\" (workers heartbeat three times per timeout)", name, d)
			good = false
		}
		pl.LeaseTimeout = d
	} else if a != nil {
		good = false
	}
	if !good {
		return nil
	}
	return pl
}

// publicKey parses one authorized_keys line and records its owner, so that a
// key held by two identities is an error (Identify must be unambiguous).
func (p *parser) publicKey(r ref, owner string) (ssh.PublicKey, bool) {
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(r.name))
	if err != nil {
		p.errorf(r.rng, "Invalid public key",
			"%s public key %q does not parse (%v); paste one line of an .pub file, like \"ssh-ed25519 AAAAC3... name\"", owner, abbreviate(r.name), err)
		return nil, false
	}
	id := string(k.Marshal())
	if prev, ok := p.keyOwners[id]; ok {
		p.errorf(r.rng, "Public key used twice",
			"%s uses the key %s that %s (%s) already holds; give each user, agent and worker its own key",
			owner, ssh.FingerprintSHA256(k), prev.what, p.line(prev.rng))
		return nil, false
	}
	p.keyOwners[id] = keyOwner{what: owner, rng: r.rng}
	return k, true
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// keys reads public_key or public_keys (exactly one of them, at least one key).
func (p *parser) keys(b *hcl.Block, c *hcl.BodyContent, owner string) ([]ssh.PublicKey, bool) {
	one, hasOne := c.Attributes["public_key"]
	_, hasMany := c.Attributes["public_keys"]
	var rs []ref
	switch {
	case hasOne && hasMany:
		p.errorf(one.NameRange, "Both public_key and public_keys",
			"%s sets both public_key and public_keys; put every key in public_keys", owner)
		return nil, false
	case hasOne:
		v, a, ok := p.str(c, "public_key")
		if !ok {
			return nil, false
		}
		rs = []ref{{v, a.Expr.Range()}}
	case hasMany:
		var ok bool
		var a *hcl.Attribute
		rs, a, ok = p.strList(c, "public_keys")
		if !ok {
			return nil, false
		}
		if len(rs) == 0 {
			p.errorf(a.Expr.Range(), "No public keys", "%s has an empty public_keys list; give at least one key", owner)
			return nil, false
		}
	default:
		p.errorf(b.DefRange, "Missing public key",
			"%s has no key; add public_key = \"ssh-ed25519 AAAA...\" (or public_keys = [...]) from its .pub file", owner)
		return nil, false
	}
	var out []ssh.PublicKey
	good := true
	for _, r := range rs {
		k, ok := p.publicKey(r, owner)
		if !ok {
			good = false
			continue
		}
		out = append(out, k)
	}
	return out, good
}

func (p *parser) user(b *hcl.Block, name string) *User {
	c := p.content(b, userSchema)
	owner := fmt.Sprintf("user %q", name)
	keys, good := p.keys(b, c, owner)
	u := &User{Name: name, PublicKeys: keys, Line: p.line(b.DefRange)}
	if rs, a, ok := p.strList(c, "roles"); ok {
		for _, r := range rs {
			if r.name != RoleLaunch && r.name != RoleApprove {
				p.errorf(r.rng, "Unknown role", "%s has role %q; roles are \"launch\" and \"approve\"", owner, r.name)
				good = false
			}
		}
		good = p.noDuplicates(rs, "roles") && good
		u.Roles = names(rs)
	} else if a != nil {
		good = false
	}
	if !good {
		return nil
	}
	return u
}

func (p *parser) agent(b *hcl.Block, name string) *Agent {
	c := p.content(b, agentSchema)
	keys, good := p.keys(b, c, fmt.Sprintf("agent %q", name))
	if !good {
		return nil
	}
	return &Agent{Name: name, PublicKeys: keys, Line: p.line(b.DefRange)}
}
