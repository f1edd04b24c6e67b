package config

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time_zone names load without the host's zoneinfo

	"github.com/hashicorp/hcl/v2"
)

// server decodes the server block; b is nil when the file has none, and
// every setting left out takes its default.
func (p *parser) server(b *hcl.Block) Server {
	s := Server{
		SSHListen:   DefaultSSHListen,
		DataDir:     filepath.Join(p.baseDir, "data"),
		MaxParallel: DefaultMaxParallel,
		CancelGrace: DefaultCancelGrace,
		TimeZone:    time.UTC,
	}
	var hostKey, sealKey string
	if b != nil {
		c := p.content(b, serverSchema)
		p.sshListen(c, &s)
		p.dataDir(c, &s)
		hostKey = p.keyPath(c, "host_key")
		sealKey = p.keyPath(c, "seal_key")
		p.maxParallel(c, &s)
		if d, _, ok := p.duration(c, "cancel_grace"); ok {
			s.CancelGrace = d
		}
		if v, ok := p.boolean(c, "allow_self_approval"); ok {
			s.AllowSelfApproval = v
		}
		p.sshLimits(c, &s)
		p.timeZone(c, &s)
		p.metricsListen(c, &s)
		p.forgeSettings(c, &s)
	}
	s.HostKey = hostKey
	if s.HostKey == "" {
		s.HostKey = filepath.Join(s.DataDir, "ssh_host_ed25519")
	}
	s.SealKey = sealKey
	if s.SealKey == "" {
		s.SealKey = filepath.Join(s.DataDir, "seal.key")
	}
	return s
}

func (p *parser) sshListen(c *hcl.BodyContent, s *Server) {
	if v, ok := p.listen(c, "ssh_listen", "127.0.0.1:2222"); ok {
		s.SSHListen = v
	}
}

// metricsListen reads metrics_listen, the HTTP address of /metrics.
func (p *parser) metricsListen(c *hcl.BodyContent, s *Server) {
	if v, ok := p.listen(c, "metrics_listen", "127.0.0.1:9464"); ok {
		s.MetricsListen = v
	}
}

// listen reads a HOST:PORT attribute; example is a good value for the
// error's advice.
func (p *parser) listen(c *hcl.BodyContent, name, example string) (string, bool) {
	v, a, ok := p.str(c, name)
	if !ok {
		return "", false
	}
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		p.errorf(a.Expr.Range(), "Invalid listen address",
			"%s = %q must be HOST:PORT, like %q or \"%s\"", name, v, example, example[strings.LastIndex(example, ":"):])
		return "", false
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.errorf(a.Expr.Range(), "Invalid listen address",
			"%s = %q has port %q; give a number from 0 to 65535", name, v, port)
		return "", false
	}
	return v, true
}

// forgeSettings reads webhook_listen (HOST:PORT; checkForges refuses it
// when no forge is declared) and ssh_address ("host" or "host:port").
func (p *parser) forgeSettings(c *hcl.BodyContent, s *Server) {
	if v, ok := p.listen(c, "webhook_listen", "127.0.0.1:8443"); ok {
		s.WebhookListen = v
		r := c.Attributes["webhook_listen"].NameRange
		p.webhookListen = &r
	}
	v, a, ok := p.str(c, "ssh_address")
	if !ok {
		return
	}
	if problem := sshAddressProblem(v); problem != "" {
		p.errorf(a.Expr.Range(), "Invalid ssh_address",
			"ssh_address = %q %s; give how people reach the SSH server, \"HOST\" or \"HOST:PORT\" like \"switchtender.example.com:2222\", or leave it out for ssh_listen", v, problem)
		return
	}
	s.SSHAddress = v
}

// sshAddressProblem is what is wrong with an ssh_address ("" when nothing
// is): it is shown in commands people paste (`ssh -p PORT HOST ...`), so
// it is a host name or IP address, with a port from 1 to 65535 or none.
func sshAddressProblem(v string) string {
	if v == "" || strings.ContainsAny(v, "/@ \t\n") {
		return "is not HOST or HOST:PORT (no scheme, user, path or space)"
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		host, port = v, ""
		if strings.Contains(v, ":") && net.ParseIP(v) == nil {
			return "is not HOST or HOST:PORT"
		}
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("has port %q, not a number from 1 to 65535", port)
	}
	if !hostRE.MatchString(host) && net.ParseIP(host) == nil {
		return "is not a host name or IP address"
	}
	return ""
}

// hostRE is a DNS host name (or a single label).
var hostRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$`)

func (p *parser) dataDir(c *hcl.BodyContent, s *Server) {
	v, a, ok := p.str(c, "data_dir")
	if !ok {
		return
	}
	if v == "" {
		p.errorf(a.Expr.Range(), "Empty path", "data_dir is empty; give a directory, or leave it out for %q", s.DataDir)
		return
	}
	s.DataDir = p.resolve(v)
}

// keyPath reads host_key or seal_key, resolved; "" when it is left out (the
// default in data_dir) or wrong.
func (p *parser) keyPath(c *hcl.BodyContent, name string) string {
	v, a, ok := p.str(c, name)
	if !ok {
		return ""
	}
	if v == "" {
		p.errorf(a.Expr.Range(), "Empty path", "%s is empty; give a file path, or leave it out for the default in data_dir", name)
		return ""
	}
	return p.resolve(v)
}

func (p *parser) maxParallel(c *hcl.BodyContent, s *Server) {
	v, a, ok := p.integer(c, "max_parallel")
	if !ok {
		return
	}
	if v < 1 {
		p.errorf(a.Expr.Range(), "Invalid max_parallel",
			"max_parallel = %d; it is how many working directories may run at once, so give 1 or more", v)
		return
	}
	s.MaxParallel = v
}

// sshLimits reads the SSH limits: durations above zero, counts of 1 or more.
func (p *parser) sshLimits(c *hcl.BodyContent, s *Server) {
	for name, dst := range map[string]*time.Duration{"ssh_handshake_timeout": &s.SSHHandshakeTimeout, "ssh_idle_timeout": &s.SSHIdleTimeout} {
		if d, _, ok := p.duration(c, name); ok {
			*dst = d
		}
	}
	counts := map[string]*int{"ssh_max_startups": &s.SSHMaxStartups, "ssh_max_connections": &s.SSHMaxConns,
		"ssh_max_connections_per_source": &s.SSHMaxConnsPerSource, "ssh_max_command_bytes": &s.SSHMaxCommandBytes,
		"ssh_max_sessions_per_connection": &s.SSHMaxSessions}
	for name, dst := range counts {
		v, a, ok := p.integer(c, name)
		if !ok {
			continue
		}
		if v < 1 {
			p.errorf(a.Expr.Range(), "Invalid "+name, "%s = %d; give 1 or more, or leave it out for the default", name, v)
			continue
		}
		*dst = v
	}
}

// timeZone reads time_zone, an IANA time zone name ("Europe/Paris", "UTC").
// The names come with the binary (time/tzdata), so they load the same on a
// host without /usr/share/zoneinfo.
func (p *parser) timeZone(c *hcl.BodyContent, s *Server) {
	v, a, ok := p.str(c, "time_zone")
	if !ok {
		return
	}
	if v == "" || strings.EqualFold(v, "local") {
		p.errorf(a.Expr.Range(), "Unknown time zone",
			"time_zone = %q; give an IANA name like \"UTC\" or \"Europe/Paris\" (not the host's local zone), or leave it out for UTC", v)
		return
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		p.errorf(a.Expr.Range(), "Unknown time zone",
			"time_zone = %q is not an IANA time zone name; write one like \"UTC\", \"Europe/Paris\" or \"America/New_York\"", v)
		return
	}
	s.TimeZone = loc
}
