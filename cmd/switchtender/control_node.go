package main

import (
	"context"
	"errors"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/sshd"
)

// The service is the front door's Service.
var _ sshd.Service = (*server.Server)(nil)

// controlNode is a control node with its front door, composed as WTF Dial's Main
// composes its parts: Start starts the service, then the door that serves
// it; Close shuts the door first, so no command reaches a service that is
// stopping, then the service.
type controlNode struct {
	srv  *server.Server
	door *sshd.Door
}

// Start starts srv's runs and listeners, then its SSH front door on the
// configured address, and attaches the door to srv (/readyz follows it).
// On error what started is stopped again (srv is not closed).
func (n *controlNode) Start(ctx context.Context) error {
	if err := n.srv.Start(ctx); err != nil {
		return err
	}
	door, err := sshd.New(n.srv)
	if err != nil {
		return err
	}
	if err := door.Listen(); err != nil {
		return err
	}
	n.door = door
	n.srv.Attach(door)
	return nil
}

// Close closes the front door, then the service.
func (n *controlNode) Close() error {
	var derr error
	if n.door != nil {
		derr = n.door.Close()
	}
	return errors.Join(derr, n.srv.Close())
}
