package planview

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestAJSONDocumentWithOneChangedLeafShowsOnlyThatPath(t *testing.T) {
	cs := committedChangeSet(t, "json_one_leaf")
	a := attributeAt(t, resourceAt(t, cs, "terraform_data.policy"), "input")
	if a.JSON == nil || a.Lines != nil || a.Before != "" || a.After != "" {
		t.Fatalf("input: %+v, want a JSON diff only", a)
	}
	want := []Attribute{{Path: "$.rules[117].port", Before: "1117", After: "9117"}}
	if len(a.JSON.Changes) > 10 || fmt.Sprint(a.JSON.Changes) != fmt.Sprint(want) || a.JSON.FormatOnly {
		t.Errorf("changes %+v, want %+v", a.JSON.Changes, want)
	}
}

func TestJSONThatDiffersOnlyInFormattingSaysSo(t *testing.T) {
	cs := committedChangeSet(t, "json_format_only")
	a := attributeAt(t, resourceAt(t, cs, "terraform_data.policy"), "input")
	if a.JSON == nil || !a.JSON.FormatOnly || len(a.JSON.Changes) != 0 || a.Lines != nil {
		t.Errorf("input: %+v, want whitespace or key order only", a)
	}
}

func TestAJSONDiffNamesEachChangedPath(t *testing.T) {
	d := jsonDiff(`{"a b":{"x":[1,2,3]},"keep":true,"gone":1,"kind":"s","s":"é \"q\""}`,
		` {"a b":{"x":[1,5]},"keep":true,"new":null,"kind":[],"s":"e"}`)
	want := []Attribute{
		{Path: `$["a b"].x[1]`, Before: "2", After: "5"},
		{Path: `$["a b"].x[2]`, Before: "3"},
		{Path: "$.gone", Before: "1"},
		{Path: "$.kind", Before: `"s"`, After: "[]"},
		{Path: "$.new", After: "null"},
		{Path: "$.s", Before: `"é \"q\""`, After: `"e"`},
	}
	if d == nil || fmt.Sprint(d.Changes) != fmt.Sprint(want) || d.More != 0 {
		t.Errorf("changes\n got %+v\nwant %+v", d, want)
	}
}

func TestAJSONDiffListsAtMostAHundredPathsAndCountsTheRest(t *testing.T) {
	var a, b []string
	for i := range 150 {
		a = append(a, strconv.Itoa(i))
		b = append(b, strconv.Itoa(i+1))
	}
	d := jsonDiff("["+strings.Join(a, ",")+"]", "["+strings.Join(b, ",")+"]")
	if d == nil || len(d.Changes) != maxJSONChanges || d.More != 50 {
		t.Errorf("%d changes, %d more", len(d.Changes), d.More)
	}
}

func TestOnlyJSONObjectsAndArraysCompareStructurally(t *testing.T) {
	for _, pair := range [][2]string{{`"1"`, `"2"`}, {`1`, `2`}, {`{"a":1}`, `not json`}, {`{"a":1}`, `{"a":1} trailing`}, {`[1]`, `"x"`}} {
		if d := jsonDiff(pair[0], pair[1]); d != nil {
			t.Errorf("%q -> %q compares as JSON: %+v", pair[0], pair[1], d)
		}
	}
	a := stringChange(`{"a":1}`, `{"a":2}`)
	if a.JSON == nil || len(a.JSON.Changes) != 1 {
		t.Errorf("two JSON objects: %+v", a)
	}
}

func TestAHeredocWithOneChangedLineShowsItInContext(t *testing.T) {
	cs := committedChangeSet(t, "heredoc")
	a := attributeAt(t, resourceAt(t, cs, "terraform_data.config_file"), "input")
	var ops string
	for _, l := range a.Lines {
		ops += l.Op
	}
	if ops != "…   -+   …" || a.Before != "" || a.After != "" {
		t.Fatalf("lines %+v", a.Lines)
	}
	if a.Lines[0].Text != "26 unchanged lines" || a.Lines[len(a.Lines)-1].Text != "28 unchanged lines" {
		t.Errorf("skipped: %q, %q", a.Lines[0].Text, a.Lines[len(a.Lines)-1].Text)
	}
	if a.Lines[4] != (DiffLine{Op: "-", Text: "setting_30 = value 30"}) || a.Lines[5] != (DiffLine{Op: "+", Text: "setting_30 = a changed value"}) {
		t.Errorf("changed lines %+v %+v", a.Lines[4], a.Lines[5])
	}
}

func TestALongOneLineStringGetsALineDiff(t *testing.T) {
	long := strings.Repeat("x", 130)
	if a := stringChange(long, "short"); len(a.Lines) != 2 || a.Before != "" {
		t.Errorf("%+v", a)
	}
	if a := stringChange("short", "shorter"); a.Lines != nil || a.Before != `"short"` || a.After != `"shorter"` {
		t.Errorf("%+v", a)
	}
}

// lcs is the length of a longest common subsequence of a and b.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestTheLineDiffIsAShortestEdit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		a, b := make([]string, r.IntN(12)), make([]string, r.IntN(12))
		for i := range a {
			a[i] = string(rune('a' + r.IntN(3)))
		}
		for i := range b {
			b[i] = string(rune('a' + r.IntN(3)))
		}
		ops := diffOps(a, b)
		var ra, rb []string
		edits := 0
		for _, o := range ops {
			switch o.op {
			case ' ':
				if a[o.i] != b[o.j] {
					t.Fatalf("%v -> %v: kept %q as %q", a, b, a[o.i], b[o.j])
				}
				ra, rb = append(ra, a[o.i]), append(rb, b[o.j])
			case '-':
				ra = append(ra, a[o.i])
				edits++
			case '+':
				rb = append(rb, b[o.j])
				edits++
			}
		}
		if strings.Join(ra, "") != strings.Join(a, "") || strings.Join(rb, "") != strings.Join(b, "") {
			t.Fatalf("%v -> %v: the script gives %v -> %v", a, b, ra, rb)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%v -> %v: %d edits, shortest %d", a, b, edits, want)
		}
	}
}

func TestAHugeLineDiffStaysBounded(t *testing.T) {
	var a, b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&a, "old line %d\n", i)
		fmt.Fprintf(&b, "new line %d %s\n", i, strings.Repeat("w", 300))
	}
	lines := lineDiff(a.String(), b.String())
	if len(lines) != maxDiffLines+1 || lines[maxDiffLines].Op != "…" {
		t.Fatalf("%d lines, last %+v", len(lines), lines[len(lines)-1])
	}
	for _, l := range lines {
		if len([]rune(l.Text)) > maxValueRunes {
			t.Errorf("a line of %d runes", len([]rune(l.Text)))
		}
	}
	if lines[0].Op != "-" || !strings.Contains(lines[maxDiffLines].Text, "199801 more lines") {
		t.Errorf("first %+v, last %+v", lines[0], lines[maxDiffLines])
	}
}
