package server

import (
	"context"
	"fmt"
	"net"
	"syscall"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
)

// One judgement of a configuration: `switchtender check`, `serve` at start
// and every reload (SIGHUP, `switchtender reload`) run the same list of
// checks, configChecks, and act on the same severities. An error is a
// configuration serve refuses to start with and a reload refuses (the
// configuration in force stays); a warning is one serve starts with and a
// reload takes, logging it, and `serve --strict` refuses. `check` reports
// both and exits 1 on either. Before, serve started with a plan_gate that
// did not compile (its rule then held what its deny would have refused,
// for an approver to release) and check passed what serve warned about.

// Severity says what serve and reload do with a Problem.
type Severity string

const (
	// SeverityError: serve does not start, and a reload keeps the
	// configuration in force.
	SeverityError Severity = "error"
	// SeverityWarning: serve starts and a reload takes the configuration,
	// logging it; serve --strict refuses it.
	SeverityWarning Severity = "warning"
)

// judging is what a check looks at: the configuration, the environment
// runs inherit, the rules compiled from it (the very ones that will gate,
// so no policy is judged from one read and enforced from another) and the
// SSH limits in force.
type judging struct {
	cfg     *config.Config
	environ []string
	rules   []*gate.Rule
	ssh     api.SSHLimits
}

// configCheck is one check of the judgement and the severity of what it
// finds.
type configCheck struct {
	severity Severity
	find     func(j judging) []Problem
}

// configChecks is the judgement, in the order problems are reported.
// Adding a check is adding a line.
var configChecks = []configCheck{
	{SeverityError, policyProblems},                                             // a plan_gate that does not compile
	{SeverityError, cloneProblems},                                              // a forge project's checkout that is not a clone of its repository
	{SeverityWarning, runProblems},                                              // working directories, tools, pools, credentials' commands
	{SeverityWarning, metricsExposure},                                          // metrics_listen off loopback
	{SeverityWarning, descriptorProblems},                                       // the SSH connection cap over half RLIMIT_NOFILE
	{SeverityWarning, func(j judging) []Problem { return ruleProblems(j.cfg) }}, // rules that can never match
}

// judge runs every check on j and returns what they find, each with its
// check's severity.
func judge(j judging) []Problem {
	var out []Problem
	for _, c := range configChecks {
		for _, p := range c.find(j) {
			p.Severity = c.severity
			out = append(out, p)
		}
	}
	return out
}

// judgeFresh judges cfg as `check` and serve before start do: its rules
// compiled now, its SSH limits from its server block.
func judgeFresh(cfg *config.Config, environ []string) []Problem {
	rules, _ := buildRules(context.Background(), cfg)
	return judge(judging{cfg: cfg, environ: environ, rules: rules, ssh: Options{}.withConfig(cfg.Server).sshLimits()})
}

// Errors returns the problems of severity error: those serve and reload
// refuse a configuration for.
func Errors(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p)
		}
	}
	return out
}

// policyProblems names each rule whose plan_gate could not be read or
// compiled: kept, its rule would hold what the policy means to refuse.
func policyProblems(j judging) []Problem {
	var out []Problem
	for i, r := range j.rules {
		if r.PolicyErr != nil {
			line := j.cfg.Rules[i].Line
			out = append(out, Problem{Where: line, What: fmt.Sprintf("rule %s (%s): its plan_gate does not compile (%v); serve and reload refuse a configuration with it, since the rule would hold for an approver what the policy means to refuse: fix the policy", r.Name, line, r.PolicyErr)})
		}
	}
	return out
}

// cloneProblems names each project with a forge whose checkout is not a
// clone of its repository there (config.CheckClone): the forge side would
// fetch pull requests from another repository, or send the forge's token
// to another host. An error, as a project path that does not exist is:
// nothing the forge sends could be planned right.
func cloneProblems(j judging) []Problem {
	var out []Problem
	for _, name := range sortedKeys(j.cfg.Projects) {
		p := j.cfg.Projects[name]
		f := j.cfg.Forges[p.Forge]
		if f == nil {
			continue
		}
		if err := config.CheckClone(context.Background(), p, f); err != nil {
			out = append(out, Problem{Where: p.Line, What: err.Error()})
		}
	}
	return out
}

// runProblems is what makes runs fail: see problems.
func runProblems(j judging) []Problem { return problems(j.cfg, j.environ) }

// metricsExposure warns of a metrics_listen that is not a loopback
// address: /metrics, /healthz and /readyz have no authentication.
func metricsExposure(j judging) []Problem {
	addr := j.cfg.Server.MetricsListen
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil // the configuration's own parse refuses it
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return []Problem{{Where: "metrics_listen", What: fmt.Sprintf("metrics_listen = %q is not a loopback address: /metrics, /healthz and /readyz answer anyone who can reach it, without authentication; listen on 127.0.0.1 or keep the port on a private network", addr)}}
}

// descriptorProblems warns when the SSH connection cap is over half this
// process's RLIMIT_NOFILE soft limit (serve lowers it at start).
func descriptorProblems(j judging) []Problem {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return []Problem{{Where: "ssh_max_connections", What: fmt.Sprintf("the file-descriptor limit could not be read (%v), so the SSH connection cap is not checked against it", err)}}
	}
	l, lowered := j.ssh.FitDescriptors(rl.Cur)
	if !lowered {
		return nil
	}
	return []Problem{{Where: "ssh_max_connections", What: fmt.Sprintf("ssh_max_connections %d is over half the file-descriptor limit (RLIMIT_NOFILE %d), so serve lowers it to %d and connections cannot take the descriptors runs need; raise the limit (ulimit -n) to allow more", j.ssh.Total, rl.Cur, l.Total)}}
}
