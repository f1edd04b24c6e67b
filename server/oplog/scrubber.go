package oplog

import (
	"fmt"
	"net/url"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/server/config"
)

// NewScrubber is the masker of every static credential value, secret
// survey default, notify URL and secret, and forge token and webhook
// secret cfg holds (config.ForgeSecrets), for sentences bound for the
// operator log; its Values are what a pull request's plan masks besides
// its own (the server's maskConfigSecrets).
func NewScrubber(cfg *config.Config) *mask.Masker {
	m := mask.New()
	for _, c := range cfg.Credentials {
		if c.Token != "" {
			m.Add(c.Token)
		}
		for _, v := range c.Env {
			m.Add(v)
		}
	}
	for _, t := range cfg.Templates {
		for _, f := range t.Survey {
			if f.Sensitive && f.Default != nil {
				m.Add(fmt.Sprint(f.Default)) // a secret's default, in clear in the file
			}
		}
	}
	for _, n := range cfg.Notifies {
		m.Add(n.URL, n.Secret)
		if u, err := url.Parse(n.URL); err == nil {
			// A webhook's token is usually its path or query: mask each
			// long enough to be one on its own.
			for _, part := range []string{u.Path, u.RawQuery, u.User.String()} {
				if len(part) >= 16 {
					m.Add(part)
				}
			}
		}
	}
	m.Add(cfg.ForgeSecrets()...)
	return m
}
