package server

import (
	"fmt"
	"slices"
	"strings"
	"time"
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

// workerView is one worker as `workers` prints it.
type workerView struct {
	Name     string    `json:"name"`
	Pool     string    `json:"pool"`
	Version  string    `json:"version"`
	State    string    `json:"state"` // idle, running, draining, disconnected
	Run      string    `json:"run"`   // the run it holds a lease for, or ""
	LastSeen time.Time `json:"last_seen"`
}

// workers lists the relay workers.
func (c *call) workers() int {
	vs := c.s.relay.list()
	if c.json {
		return writeJSON(c.out, orEmpty(vs))
	}
	var b strings.Builder
	writeWorkerTable(&b, vs)
	fmt.Fprint(c.out, b.String())
	return exitOK
}

// writeWorkerTable writes the workers as `workers` prints them.
func writeWorkerTable(b *strings.Builder, vs []workerView) {
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

// list is every worker seen, by pool and name.
func (h *relayHub) list() []workerView {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []workerView
	for _, w := range h.workers {
		v := workerView{Name: w.name, Pool: w.pool, Version: w.version, LastSeen: w.lastSeen, State: "idle"}
		if w.lease != nil {
			v.Run, v.State = w.lease.job.runID, "running"
		}
		switch {
		case w.conn == nil:
			v.State = "disconnected"
		case w.draining:
			v.State = "draining"
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b workerView) int { return strings.Compare(a.Pool+"/"+a.Name, b.Pool+"/"+b.Name) })
	return out
}
