package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// auditFlags declares the flags of `audit sub` (verify or export); it
// returns them and where --config and --head land (--head only for verify).
func auditFlags(sub string) (*flag.FlagSet, *string, *string) {
	fs := flag.NewFlagSet("audit "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", "", "the server's configuration `FILE`")
	head := new(string)
	if sub == "verify" {
		fs.StringVar(head, "head", "", "a head `HASH` kept from an earlier verify or the server log; it must still be in the chain")
	}
	return fs, cfgPath, head
}

// cmdAudit reads the audit trail of a stopped server's store, found through
// its configuration's data_dir: `verify` checks the whole hash chain and
// names the first entry that does not verify (exit 1); `export` writes the
// trail as JSON lines (one event per line, with seq, prev and hash) for a
// SIEM. The server must be stopped: the store is locked while it runs.
func cmdAudit(args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "verify" && args[0] != "export") {
		return usageError{"audit needs verify or export, and --config FILE"}
	}
	fs, cfgPath, head := auditFlags(args[0])
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{fmt.Sprintf("audit %s: %v", args[0], err)}
	}
	if *cfgPath == "" || fs.NArg() > 0 {
		return usageError{fmt.Sprintf("audit %s takes --config FILE and nothing else", args[0])}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	db, err := store.Open(filepath.Join(cfg.Server.DataDir, "switchtender.db"))
	if err != nil {
		return fmt.Errorf("%w (stop the server first: audit reads its store offline)", err)
	}
	defer db.Close()
	if args[0] == "verify" {
		return verifyAudit(db, *head, stdout)
	}
	events, err := db.AuditTrail(nil)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// verifyAudit checks the chain, and that the anchor head (if given) is
// still in it, then prints the head to keep for the next time.
func verifyAudit(db *store.DB, head string, stdout io.Writer) error {
	n, err := db.VerifyAudit()
	if err != nil {
		return fmt.Errorf("%d entries verified, then: %w", n, err)
	}
	if head != "" {
		ok, err := db.AuditHasAnchor(head)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: no entry has the head hash %s that was kept; entries up to it were rewritten or removed", store.ErrAuditBroken, head)
		}
	}
	seq, h, err := db.AuditHead()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "audit trail verified: %d entries, each chained to the one before\nhead: entry %d, hash %s (keep it outside this machine; verify --head checks nothing before it changed)\n", n, seq, h)
	return nil
}
