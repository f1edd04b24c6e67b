package planview

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// shownPairs are the before and after texts the view shows for each
// changed value of cs: plain attributes, JSON paths, the removed and added
// lines of a line diff (paired in order), and outputs.
func shownPairs(cs *ChangeSet) [][2]string {
	var out [][2]string
	add := func(a Attribute) {
		switch {
		case a.JSON != nil:
			for _, c := range a.JSON.Changes {
				out = append(out, [2]string{c.Before, c.After})
			}
		case len(a.Lines) > 0:
			var removed, added []string
			for _, l := range a.Lines {
				switch l.Op {
				case "-":
					removed = append(removed, l.Text)
				case "+":
					added = append(added, l.Text)
				}
			}
			for k := range min(len(removed), len(added)) {
				out = append(out, [2]string{removed[k], added[k]})
			}
		case !a.Sensitive && !a.Unknown:
			out = append(out, [2]string{a.Before, a.After})
		}
	}
	for _, r := range cs.Resources {
		for _, a := range r.Attributes {
			add(a)
		}
	}
	for _, o := range cs.Outputs {
		add(o.Change)
	}
	return out
}

// TestTwoValuesThatDifferAfterTheCutNeverReadTheSame checks that two
// values whose first 200 runes are the same still read differently:
// strings that escape to more than 200 runes, long lines of a line diff,
// strings and numbers inside a JSON string, long numbers, and outputs
// whose whole lists or maps would be summarised alike. Each side stays
// within 200 runes and shows where they differ.
func TestTwoValuesThatDifferAfterTheCutNeverReadTheSame(t *testing.T) {
	long, ctl := strings.Repeat("x", 300), strings.Repeat("\x01", 100)
	digits := strings.Repeat("9", 300)
	list := func(last int) string {
		var l []string
		for i := range 150 {
			l = append(l, strconv.Itoa(i))
		}
		l[120] = strconv.Itoa(last)
		return "[" + strings.Join(l, ",") + "]"
	}
	dict := func(v string) string {
		var m []string
		for i := range 40 {
			m = append(m, fmt.Sprintf(`"key%02d":"value"`, i))
		}
		m[33] = `"key33":"` + v + `"`
		return "{" + strings.Join(m, ",") + "}"
	}
	output := func(before, after string) []byte {
		return []byte(`{"format_version":"1.2","resource_changes":[],"output_changes":{"o":{"actions":["update"],"before":` + before +
			`,"after":` + after + `,"after_unknown":false,"before_sensitive":false,"after_sensitive":false}}}`)
	}
	plans := map[string][]byte{
		"a short string escaped past the cut": inputChange(ctl+"a", ctl+"b"),
		"a long line":                         inputChange(long+"a", long+"b"),
		"a long line among others":            inputChange("#!/bin/sh\n"+long+"a\nexit 0\n", "#!/bin/sh\n"+long+"b\nexit 0\n"),
		"a line that only grows":              inputChange(long, long+"!"),
		"a string in a JSON string":           inputChange(`{"a":"`+long+`1"}`, `{"a":"`+long+`2"}`),
		"a number in a JSON string":           inputChange(`{"a":`+digits+`1}`, `{"a":`+digits+`2}`),
		"a long number": planWith(change("terraform_data.x", `["update"]`,
			`"before":{"input":`+digits+`1},"after":{"input":`+digits+`2}`)),
		"an output list":   output(list(120), list(7)),
		"an output map":    output(dict("value"), dict("other")),
		"an output string": output(jsonString(long+"a"), jsonString(long+"b")),
	}
	for name, plan := range plans {
		cs := mustBuild(t, plan)
		pairs := shownPairs(cs)
		if len(pairs) == 0 {
			t.Errorf("%s: no changed value is shown:\n%s", name, Text(cs, 0))
		}
		for _, p := range pairs {
			if p[0] == p[1] {
				t.Errorf("%s: the change reads %s -> %s", name, p[0], p[1])
			}
			for _, s := range p {
				if n := utf8.RuneCountInString(s); n > maxValueRunes {
					t.Errorf("%s: a side is %d runes: %s", name, n, s)
				}
			}
		}
	}
}

// TestAWindowOnTwoValuesShowsWhereTheyDiffer checks distinct on random
// pairs of long strings that differ at one random place, escapes among
// them: the two sides read differently, each within the limit, and a
// window never starts or ends inside an escape.
func TestAWindowOnTwoValuesShowsWhereTheyDiffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	pieces := []string{"a", "b", "\x01", "\n", `"`, `\`, "é", "字", "\U0001f600", "\u202e"}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(400) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		before := []rune(sb.String())
		after := append([]rune(nil), before...)
		at := rng.IntN(len(after) + 1)
		switch {
		case at == len(after):
			after = append(after, 'z')
		case rng.IntN(2) == 0:
			after[at] = 'z'
		default:
			after = append(after[:at], after[at+1:]...)
		}
		b, a := string(before), string(after)
		if b == a {
			continue
		}
		sb2, sa := distinct(quoteBounded(b, maxValueRunes), quoteBounded(a, maxValueRunes), func() (string, string) {
			return strconv.Quote(b), strconv.Quote(a)
		}, maxValueRunes)
		if sb2 == sa {
			t.Fatalf("%q -> %q reads %s -> %s", b, a, sb2, sa)
		}
		for k, s := range []string{sb2, sa} {
			if utf8.RuneCountInString(s) > maxValueRunes {
				t.Fatalf("a side is over %d runes: %s", maxValueRunes, s)
			}
			full := strconv.Quote([]string{b, a}[k])
			if !onUnits(full, strings.TrimSuffix(strings.TrimPrefix(s, "…"), "…")) {
				t.Fatalf("the window %s of %s cuts an escape", s, full)
			}
		}
	}
}

// onUnits reports whether part is a piece of full that starts and ends
// between two of its units (unitLen): never inside an escape.
func onUnits(full, part string) bool {
	bounds := map[int]bool{0: true}
	for i := 0; i < len(full); {
		i += unitLen(full[i:])
		bounds[i] = true
	}
	for from := 0; ; {
		j := strings.Index(full[from:], part)
		if j < 0 {
			return false
		}
		if at := from + j; bounds[at] && bounds[at+len(part)] {
			return true
		}
		from += j + 1
	}
}
