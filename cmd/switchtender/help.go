package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// subcommand is one local subcommand as help shows it. flags, when set,
// declares the subcommand's flags exactly as the subcommand itself does, so
// the help lists what the command really accepts.
type subcommand struct {
	name    string // as typed: "serve", "keygen seal"
	usage   string // the whole usage line
	summary string // one line, for the top-level listing
	example string // one command line a user can copy
	flags   func() *flag.FlagSet
}

// subcommands is every local subcommand, in the order the top-level usage
// lists them. "keygen" and "audit" are groups: their entries say which
// words follow.
var subcommands = []subcommand{
	{name: "serve", usage: "switchtender serve [--config FILE] [--strict] [--log-format text|json] [--log-level LEVEL]", summary: "run the control node; SIGHUP reloads its configuration",
		example: "switchtender serve --config /etc/switchtender/switchtender.hcl --strict --log-format json",
		flags:   func() *flag.FlagSet { fs, _ := serveFlags(); return fs }},
	{name: "demo", usage: "switchtender demo [--data DIR] [--listen ADDR]", summary: "run the control node on an embedded example and print how to connect",
		example: "switchtender demo --listen 127.0.0.1:2223",
		flags:   func() *flag.FlagSet { fs, _, _ := demoFlags(); return fs }},
	{name: "check", usage: "switchtender check [--config FILE] [--json]", summary: "report what serve and reload would refuse (error) or warn about (warning), each with file:line (exit 1 if anything)",
		example: "switchtender check --config switchtender.hcl --json",
		flags:   func() *flag.FlagSet { fs, _ := checkFlags(); return fs }},
	{name: "reload", usage: "switchtender reload [--config FILE]", summary: "check the configuration, send SIGHUP to the serve that uses its data directory, and wait for its outcome (exit 1 if refused)",
		example: "switchtender reload --config /etc/switchtender/switchtender.hcl",
		flags:   func() *flag.FlagSet { fs, _ := reloadFlags(); return fs }},
	{name: "audit", usage: "switchtender audit verify|export --config FILE", summary: "check or export the audit trail of a stopped server",
		example: "switchtender audit verify --config switchtender.hcl"},
	{name: "audit verify", usage: "switchtender audit verify --config FILE [--head HASH]", summary: "check the audit trail's hash chain (server stopped)",
		example: "switchtender audit verify --config switchtender.hcl --head 3f1a…",
		flags:   func() *flag.FlagSet { fs, _, _ := auditFlags("verify"); return fs }},
	{name: "audit export", usage: "switchtender audit export --config FILE", summary: "write the audit trail as JSON lines, for a SIEM (server stopped)",
		example: "switchtender audit export --config switchtender.hcl > audit.jsonl",
		flags:   func() *flag.FlagSet { fs, _, _ := auditFlags("export"); return fs }},
	{name: "keygen", usage: "switchtender keygen seal|pool", summary: "make keys: a server sealing key or a pool's delivery key pair",
		example: "switchtender keygen seal --out /etc/switchtender/seal.key"},
	{name: "keygen seal", usage: "switchtender keygen seal --out FILE", summary: "make a server sealing key (mode 0600); point server.seal_key at it",
		example: "switchtender keygen seal --out /etc/switchtender/seal.key",
		flags:   func() *flag.FlagSet { fs, _ := keygenSealFlags(); return fs }},
	{name: "keygen pool", usage: "switchtender keygen pool --out FILE", summary: "write a pool's delivery identity (age, mode 0600); print its age1... recipient",
		example: "switchtender keygen pool --out /etc/switchtender/pool-eu.key",
		flags:   func() *flag.FlagSet { fs, _ := keygenFlags("pool"); return fs }},
	{name: "worker", usage: "switchtender worker --config FILE", summary: "a relay worker of a pool: dials the control node over SSH and runs its pool's runs",
		example: "switchtender worker --config worker.hcl",
		flags:   func() *flag.FlagSet { fs, _ := workerFlags(); return fs }},
	{name: "tofu", usage: "switchtender tofu", summary: "build or find the pinned OpenTofu the demo and tests use; print its path",
		example: "switchtender tofu"},
	{name: "version", usage: "switchtender version", summary: "print the module version and VCS commit of this build", example: "switchtender version"},
	{name: "help", usage: "switchtender help [COMMAND]", summary: "this listing, or one command's usage, flags and example",
		example: "switchtender help serve"},
}

// isHelpWord reports whether a word asks for help.
func isHelpWord(w string) bool { return w == "-h" || w == "--help" || w == "-help" }

// helpTopic returns the subcommand a command line asks help about
// (`serve --help`, `keygen seal -h`, `help audit verify`), or nil when the
// words ask for no help, and ok=false when they ask help about an unknown
// command. The longest known prefix of the leading words (those before
// the first flag) names the topic.
func helpTopic(args []string) (sc *subcommand, asked, ok bool) {
	words := args
	if len(args) > 0 && args[0] == "help" {
		if len(args) > 1 && isHelpWord(args[1]) {
			return findSubcommand("help"), true, true // help --help
		}
		words, asked = args[1:], true
	}
	var names []string
	leading := true
	for _, w := range words {
		leading = leading && !strings.HasPrefix(w, "-")
		if isHelpWord(w) {
			asked = true
		} else if leading {
			names = append(names, w)
		}
	}
	if !asked {
		return nil, false, true
	}
	for n := min(len(names), 2); n > 0; n-- {
		if sc := findSubcommand(strings.Join(names[:n], " ")); sc != nil {
			return sc, true, true
		}
	}
	return nil, true, len(names) == 0
}

// findSubcommand returns the subcommand named name, or nil.
func findSubcommand(name string) *subcommand {
	for i := range subcommands {
		if subcommands[i].name == name {
			return &subcommands[i]
		}
	}
	return nil
}

// writeUsage writes the top-level usage: every local subcommand with its
// usage line and summary, and where the SSH commands are listed.
func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "switchtender runs OpenTofu and Terraform for a team.\n\nUsage:")
	for _, sc := range subcommands {
		fmt.Fprintf(w, "  %s\n      %s\n", sc.usage, sc.summary)
	}
	fmt.Fprintln(w, "\n`switchtender COMMAND --help` (or `help COMMAND`) shows one command's flags and an example.")
	fmt.Fprintln(w, "Users and scripts talk to a running server over SSH: `ssh -p PORT HOST help` lists those commands.")
}

// writeSubHelp writes one subcommand's usage, summary, flags and example.
func writeSubHelp(w io.Writer, sc *subcommand) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", sc.usage, sc.summary)
	if sc.flags == nil && strings.Contains(sc.usage, "|") {
		fmt.Fprintln(w, "\ncommands:")
		for _, sub := range subcommands {
			if strings.HasPrefix(sub.name, sc.name+" ") {
				fmt.Fprintf(w, "  %s\n      %s\n", sub.usage, sub.summary)
			}
		}
	}
	fmt.Fprintln(w, "\nflags:")
	if sc.flags != nil {
		sc.flags().VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			if f.DefValue != "" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			}
			fmt.Fprintf(w, "  --%-20s %s\n", strings.TrimSpace(f.Name+" "+name), usage)
		})
	}
	fmt.Fprintf(w, "  --%-20s %s\n", "help, -h", "this help")
	fmt.Fprintf(w, "\nexample:\n  %s\n", sc.example)
}
