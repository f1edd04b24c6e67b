package sshd

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchtender/switchtender/server/api"
)

var workersCommand = command{
	name:    "workers",
	example: `ssh -p 2222 HOST workers --json`,
	usage:   "workers [--json]",
	summary: "relay workers: pool, version, state, current run, last heartbeat",
	help: `The relay workers the control node has seen since it started, by pool
and name: their version, whether they are connected, idle, running a run
or draining, the run they hold a lease for, and when they were last heard
from (a heartbeat, or any message).

--json: [{"name", "pool", "version", "state", "run", "last_seen"}].`,
	json: true,
	bind: noFlags((*call).workers),
}

// workers lists the relay workers.
func (c *call) workers() int {
	vs := c.s.Workers()
	if c.json {
		return writeJSON(c.out, api.OrEmpty(vs))
	}
	var b strings.Builder
	writeWorkerTable(&b, vs)
	fmt.Fprint(c.out, b.String())
	return exitOK
}

// writeWorkerTable writes the workers as `workers` prints them.
func writeWorkerTable(b *strings.Builder, vs []api.WorkerView) {
	if len(vs) == 0 {
		fmt.Fprintln(b, "no relay worker has connected since the control node started")
		return
	}
	fmt.Fprintf(b, "%-16s %-10s %-10s %-13s %-6s %s\n", "WORKER", "POOL", "VERSION", "STATE", "RUN", "LAST SEEN")
	for _, v := range vs {
		run := v.Run
		if run == "" {
			run = "-"
		}
		fmt.Fprintf(b, "%-16s %-10s %-10s %-13s %-6s %s ago\n", v.Name, v.Pool, v.Version, v.State, run, time.Since(v.LastSeen).Round(time.Second))
	}
}
