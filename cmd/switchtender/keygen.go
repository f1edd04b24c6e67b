package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/switchtender/switchtender/seal"
)

// keygenSealFlags declares `keygen seal`'s flags; it returns them and
// where --out lands.
func keygenSealFlags() (*flag.FlagSet, *string) { return keygenFlags("seal") }

// keygenFlags declares `keygen KIND`'s flags (--out); it returns them and
// where --out lands.
func keygenFlags(kind string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("keygen "+kind, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("out", "", "the `FILE` to write the key to (must not exist)")
}

// cmdKeygen makes the server's sealing key or a pool's delivery identity,
// each written mode 0600: the identity for the workers, its recipient
// (printed) for the pool's delivery_key.
func cmdKeygen(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{"keygen needs what to make: seal or pool"}
	}
	switch args[0] {
	case "seal":
		fs, out := keygenSealFlags()
		if err := fs.Parse(args[1:]); err != nil {
			return usageError{err.Error()}
		}
		if *out == "" {
			return usageError{"keygen seal needs --out FILE"}
		}
		k, err := seal.LoadOrCreateKey(*out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sealing key in %s (recipient %s); point server.seal_key at it\n", *out, k.Recipient())
		return nil
	case "pool":
		return keygenPool(args[1:], stdout)
	}
	return usageError{fmt.Sprintf("keygen makes seal or pool keys, not %q", args[0])}
}

// keygenPool writes a pool's delivery identity (age X25519) to a new file of
// mode 0600 and prints its recipient, which the control node's pool block
// names as delivery_key. It never overwrites a file: a pool's workers may
// hold the identity it has.
func keygenPool(args []string, stdout io.Writer) error {
	fs, out := keygenFlags("pool")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *out == "" {
		return usageError{"keygen pool needs --out FILE: the identity is a secret, written only to a file of mode 0600"}
	}
	if _, err := os.Lstat(*out); err == nil {
		return fmt.Errorf("%s exists; keygen pool never overwrites a delivery identity (workers may hold it): choose another --out", *out)
	}
	k, err := seal.LoadOrCreateKey(*out)
	if err != nil {
		return fmt.Errorf("writing the pool's delivery identity: %w", err)
	}
	fmt.Fprintf(stdout, "%s\n", k.Recipient())
	fmt.Fprintf(os.Stderr, "delivery identity in %s (mode 0600): give it to the pool's workers as delivery_identity; put the recipient above in the pool block's delivery_key\n", *out)
	return nil
}
