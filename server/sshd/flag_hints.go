package sshd

import (
	"flag"
	"regexp"
	"slices"
	"strings"

	"github.com/agext/levenshtein"

	"github.com/switchtender/switchtender/screentext"
)

// undefinedFlag matches the flag package's error for a word it has no
// flag for, with the name as it read it (without dashes or a value).
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)

// negativeNumber is a word like -1: a run number given as a negative one.
var negativeNumber = regexp.MustCompile(`^-[0-9]+$`)

// unknownFlag is the sentence for name, a flag fs does not have, read
// from args (the words the flag package was parsing): the flag as typed
// (dashes and all, without its value, escaped as one unit), then what was
// likely meant: that RUN (or CHECK) is a run number, for a negative
// number where the command takes one (runArgs are its positional
// arguments), or else the command's flags close to it (closeFlags).
func unknownFlag(fs *flag.FlagSet, args []string, name string, runArgs []string) string {
	typed := "--" + name
	for _, w := range args {
		if n, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "="); strings.HasPrefix(w, "-") && n == name {
			typed, _, _ = strings.Cut(w, "=")
			break
		}
	}
	msg := "there is no flag " + screentext.Field(typed)
	if arg := runArg(runArgs); arg != "" && negativeNumber.MatchString(typed) {
		return msg + "; " + arg + " is a run number such as 4 (`runs` lists them)"
	}
	if near := closeFlags(fs, name); len(near) > 0 {
		return msg + " (did you mean --" + strings.Join(near, " or --") + "?)"
	}
	return msg
}

// runArg is the name of the positional argument that is a run number
// (RUN, or CHECK: a drift check's run) among args, or "".
func runArg(args []string) string {
	for _, a := range args {
		if a := strings.Trim(a, "[]"); a == "RUN" || a == "CHECK" {
			return a
		}
	}
	return ""
}

// closeFlags are the flags of fs (and help) that name, a flag fs does not
// have, is likely a slip for, in order of name: those it is a prefix of or
// that are a prefix of it (two letters at least), or else those the
// fewest edits away (levenshtein), at most one edit for a name of up to
// four letters and two for a longer one. Nil when none is that close.
func closeFlags(fs *flag.FlagSet, name string) []string {
	name = strings.ToLower(name)
	known := []string{"help"}
	fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
	slices.Sort(known)
	var prefixed []string
	best, bestD := []string(nil), 3
	if len(name) <= 4 {
		bestD = 2
	}
	for _, k := range known {
		if len(name) >= 2 && len(k) >= 2 && (strings.HasPrefix(k, name) || strings.HasPrefix(name, k)) {
			prefixed = append(prefixed, k)
			continue
		}
		switch d := levenshtein.Distance(name, k, nil); {
		case d < bestD:
			best, bestD = []string{k}, d
		case d == bestD:
			best = append(best, k)
		}
	}
	if len(prefixed) > 0 {
		return prefixed
	}
	return best
}
