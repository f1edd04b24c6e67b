package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/switchtender/switchtender/seal"
)

// keygenSealFlags declares `keygen seal`'s flags; it returns them and
// where --out lands.
func keygenSealFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("keygen seal", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("out", "", "the `FILE` to write the key to (must not exist)")
}

// cmdKeygen makes the server's sealing key (written mode 0600) or prints a
// pool's delivery key pair: the identity for the workers, the recipient for
// the pool's delivery_key.
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
		k, err := seal.GenerateKey()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "# give the identity to the pool's workers; put the recipient in pool.delivery_key\nidentity:  %s\nrecipient: %s\n", k.MarshalIdentity(), k.Recipient())
		return nil
	}
	return usageError{fmt.Sprintf("keygen makes seal or pool keys, not %q", args[0])}
}
