// Package krl reads OpenSSH key revocation lists: the binary files
// `ssh-keygen -k` writes (OpenSSH's PROTOCOL.krl), which sshd's
// RevokedKeys reads. A List says whether a certificate (by its CA and
// serial, or its key ID) or a plain key (by its blob or fingerprint) is
// revoked.
package krl

import (
	"errors"

	"golang.org/x/crypto/ssh"
)

// List is a parsed key revocation list. It is not modified after Parse, so
// it may be read from many goroutines at once.
type List struct {
	// Version is the KRL's krl_version; Comment its comment.
	Version uint64
	Comment string
}

// Parse reads a binary KRL (starting "SSHKRL\n\0"). It refuses a file
// that is not one, a format version other than 1, a truncated or
// malformed section, and an unknown section type, saying which and at
// which byte offset.
func Parse(data []byte) (*List, error) {
	return nil, errors.New("krl: not implemented yet")
}

// Revoked reports whether key — a *ssh.Certificate or a plain public key —
// is revoked, and if so why ("serial 101 of CA SHA256:… is revoked", "key
// ID \"alice\" is revoked", "the key SHA256:… is revoked"). For a
// certificate both the certificate (by CA and serial or key ID) and its
// certified key are looked up.
func (l *List) Revoked(key ssh.PublicKey) (bool, string) {
	return false, ""
}
