package planview

import "strings"

// Line diff bounds: lines of context around each change, the diff lines
// kept (a "…" line then says how many more there were), and the edit
// distance the Myers search goes to (past it, and on inputs so large the
// search would cost more than maxDiffWork steps, the differing middle is
// shown as removed then added).
const (
	diffContext  = 3
	maxDiffLines = 200
	maxEditDist  = 1000
	maxDiffWork  = 20_000_000
)

// lineDiff is the line diff of two strings: changed lines with diffContext
// lines of context, each run of unchanged lines between them collapsed to a
// "…" line saying how many.
func lineDiff(before, after string) []DiffLine {
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	ops := diffOps(a, b)
	return hunks(ops, a, b)
}

// editOp is one step of an edit script: ' ' keeps a[i] (= b[j]), '-'
// removes a[i], '+' adds b[j].
type editOp struct {
	op   byte
	i, j int
}

// diffOps returns an edit script from a to b: the common prefix and suffix,
// and a shortest script (Myers) for the middle, or removed-then-added when
// the middle is too far apart.
func diffOps(a, b []string) []editOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]editOp, 0, len(a)+len(b)-pre-suf)
	for i := range pre {
		ops = append(ops, editOp{' ', i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(lineIDs(ma, mb))
	if !ok {
		mid = mid[:0]
		for i := range ma {
			mid = append(mid, editOp{'-', i, 0})
		}
		for j := range mb {
			mid = append(mid, editOp{'+', len(ma), j})
		}
	}
	for _, o := range mid {
		ops = append(ops, editOp{o.op, o.i + pre, o.j + pre})
	}
	for k := range suf {
		ops = append(ops, editOp{' ', len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}

// lineIDs numbers the distinct lines of a and b, so the search compares
// ints.
func lineIDs(a, b []string) ([]int, []int) {
	ids := map[string]int{}
	num := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return num(a), num(b)
}

// myers returns a shortest edit script from a to b (E. Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986), or false when it needs
// more than the bounded number of edits.
func myers(a, b []int) ([]editOp, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEditDist)
	if n+m > 0 {
		limit = min(limit, maxDiffWork/(n+m))
	}
	off := limit + 1
	v := make([]int, 2*off+1)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the search's trace back from (n, m), where trace[d] holds
// the furthest x of each diagonal k in [-d-1, d+1] before round d.
func backtrack(trace [][]int, n, m int) []editOp {
	var rev []editOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d+1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, editOp{' ', x, y})
		}
		if d == 0 {
			break
		}
		if x == prevX {
			rev = append(rev, editOp{'+', x, y - 1})
		} else {
			rev = append(rev, editOp{'-', x - 1, y})
		}
		x, y = prevX, prevY
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// hunks turns an edit script into diff lines: every change, diffContext
// unchanged lines around each, and "…" lines for the unchanged runs left
// out, at most maxDiffLines lines then a "…" line for the rest.
func hunks(ops []editOp, a, b []string) []DiffLine {
	show := make([]bool, len(ops))
	for i, o := range ops {
		if o.op != ' ' {
			for j := max(0, i-diffContext); j <= min(len(ops)-1, i+diffContext); j++ {
				show[j] = true
			}
		}
	}
	var out []DiffLine
	partner := map[int]int{}
	for i := 0; i < len(ops); {
		if len(out) == maxDiffLines {
			out = append(out, DiffLine{Op: "…", Text: countNoun(countShown(show[i:]), "more line") + " of the diff not shown"})
			return out
		}
		if !show[i] {
			j := i
			for j < len(ops) && !show[j] {
				j++
			}
			out = append(out, DiffLine{Op: "…", Text: countNoun(j-i, "unchanged line")})
			i = j
			continue
		}
		if ops[i].op != ' ' && (i == 0 || ops[i-1].op == ' ') {
			pairRun(ops, i, partner)
		}
		out = append(out, DiffLine{Op: string(ops[i].op), Text: lineText(ops, i, a, b, partner)})
		i++
	}
	return out
}

// pairRun pairs, in the run of changed lines that starts at ops[i], the
// k-th removed line with the k-th added one, in partner (cleared first):
// each paired op's index to the other's.
func pairRun(ops []editOp, i int, partner map[int]int) {
	clear(partner)
	var removed, added []int
	for ; i < len(ops) && ops[i].op != ' '; i++ {
		if ops[i].op == '-' {
			removed = append(removed, i)
		} else {
			added = append(added, i)
		}
	}
	for k := range min(len(removed), len(added)) {
		partner[removed[k]], partner[added[k]] = added[k], removed[k]
	}
}

// lineText is the text of ops[i]'s line, cut to maxValueRunes runes; a
// removed or added line cut so that it reads as the line it is paired
// with, though the two differ, is shown around their first difference
// (see distinct).
func lineText(ops []editOp, i int, a, b []string, partner map[int]int) string {
	line := func(o editOp) string {
		if o.op == '+' {
			return b[o.j]
		}
		return a[o.i]
	}
	text := line(ops[i])
	cut := cutRunes(strings.Clone(text), maxValueRunes)
	p, ok := partner[i]
	if !ok {
		return cut
	}
	other := line(ops[p])
	shown, _ := distinct(cut, cutRunes(other, maxValueRunes), func() (string, string) { return text, other }, maxValueRunes)
	return shown // a window is a new string: it keeps no part of the plan alive
}

func countShown(show []bool) int {
	n := 0
	for _, s := range show {
		if s {
			n++
		}
	}
	return n
}
