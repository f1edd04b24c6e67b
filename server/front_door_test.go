package server

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/sshd"
)

// The front door (package server/sshd) composed with the service as
// cmd/switchtender composes them, and the door's words under the names
// this package's tests use.

// startWithDoor starts s, then its SSH front door, and attaches the door
// (s.Close closes it first), as cmd/switchtender's control node does.
func (s *Server) startWithDoor(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	d, err := sshd.New(s)
	if err != nil {
		return fmt.Errorf("building the front door: %w", err)
	}
	if err := d.Listen(); err != nil {
		return err
	}
	s.Attach(d)
	return nil
}

// command carries out one SSH command for id through the attached front
// door (sshd.Door.Command).
func (s *Server) command(ctx context.Context, id Identity, args []string, in io.Reader, out, errOut io.Writer) int {
	s.mu.Lock()
	d, _ := s.door.(*sshd.Door)
	s.mu.Unlock()
	if d == nil {
		panic("command: the server has no front door attached; start it with startWithDoor")
	}
	return d.Command(ctx, id, args, in, out, errOut)
}

// console is the console backend of one identity.
type console = sshd.Console

// newConsole is the console backend of svc for who.
func newConsole(s *Server, who Identity) *console { return sshd.NewConsole(s, who) }

type (
	runView    = api.RunView
	workerView = api.WorkerView
)

const (
	exitOK                = api.ExitOK
	exitRefused           = api.ExitRefused
	exitUsage             = api.ExitUsage
	exitHeld              = sshd.ExitHeld
	errCodeUsage          = sshd.ErrCodeUsage
	mcpMaxMessage         = sshd.MCPMaxMessage
	refusalLogPerSource   = sshd.RefusalLogPerSource
	defaultSSHMaxSessions = api.DefaultSSHMaxSessions
)

// printable is text from runs as a terminal shows it (screentext.Text).
func printable(b []byte) []byte { return []byte(screentext.Text(string(b))) }

// command is one SSH command of the door's table, as tests read it.
type command struct {
	name, usage, summary, help, example string
	json                                bool
	bind                                func(fs *flag.FlagSet)
}

// commandTable is every SSH command, in the order `help` lists them.
var commandTable = func() []*command {
	var out []*command
	for _, c := range sshd.Commands() {
		out = append(out, &command{name: c.Name, usage: c.Usage, summary: c.Summary, help: c.Help, example: c.Example, json: c.JSON, bind: c.DeclareFlags})
	}
	return out
}()
