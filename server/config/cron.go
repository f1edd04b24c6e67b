package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed five-field cron expression (a template's check_cron):
// minute hour day-of-month month day-of-week, as in crontab(5). Each field
// is "*", a number, a range "A-B", a step "*/N" or "A-B/N" (or "A/N", from A
// to the field's maximum), or a comma-separated list of those. Month and
// weekday names are not accepted; day-of-week 0 and 7 are both Sunday. As in
// Vixie cron, when both day-of-month and day-of-week are restricted (neither
// starts with "*") a day matches if either does.
//
// A Cron is read-only after ParseCron and safe to use from many goroutines.
type Cron struct {
	text   string
	minute uint64 // bit i set: minute i (0-59)
	hour   uint64 // bit i: hour i (0-23)
	dom    uint64 // bit i: day of month i (1-31)
	month  uint64 // bit i: month i (1-12)
	dow    uint64 // bit i: weekday i (0-6, Sunday 0)
	// domStar and dowStar record a field written starting with "*", which
	// decides how day-of-month and day-of-week combine.
	domStar, dowStar bool
}

// cronField describes one field's name and bounds, for parsing and errors.
type cronField struct {
	name     string
	min, max int
}

var cronFields = [5]cronField{
	{"minute", 0, 59},
	{"hour", 0, 23},
	{"day-of-month", 1, 31},
	{"month", 1, 12},
	{"day-of-week", 0, 7},
}

// daysIn is the most days each month (1-12) can have; February 29 counts.
var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// ParseCron parses a five-field cron expression. The error is a sentence
// naming the field that is wrong and what it accepts.
func ParseCron(s string) (*Cron, error) {
	fields := strings.Fields(s)
	if len(fields) != 5 {
		if len(fields) == 0 {
			return nil, fmt.Errorf("the cron expression is empty; write five fields, minute hour day-of-month month day-of-week, like \"0 */6 * * *\"")
		}
		return nil, fmt.Errorf("%q has %d fields; write exactly five, minute hour day-of-month month day-of-week, like \"0 */6 * * *\" (no seconds field, no @daily)", s, len(fields))
	}
	c := &Cron{text: strings.Join(fields, " ")}
	dst := [5]*uint64{&c.minute, &c.hour, &c.dom, &c.month, &c.dow}
	for i, f := range fields {
		set, err := parseCronField(f, cronFields[i])
		if err != nil {
			return nil, err
		}
		*dst[i] = set
	}
	if c.dow&(1<<7) != 0 { // 7 is Sunday too
		c.dow = c.dow&^(1<<7) | 1
	}
	c.domStar = strings.HasPrefix(fields[2], "*")
	c.dowStar = strings.HasPrefix(fields[4], "*")
	if c.dowStar && !c.domStar && !c.domFitsAMonth() {
		return nil, fmt.Errorf("%q never fires: no month it names has the day-of-month it names", s)
	}
	return c, nil
}

// domFitsAMonth reports whether some month in the set has some day in the
// day-of-month set (so "0 0 31 2 *" is refused rather than never running).
func (c *Cron) domFitsAMonth() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		if c.dom&(uint64(1)<<(daysIn[m]+1)-1) != 0 {
			return true
		}
	}
	return false
}

// parseCronField parses one comma-separated field into a bit set.
func parseCronField(f string, fd cronField) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(f, ",") {
		if part == "" {
			return 0, fmt.Errorf("%s field %q has an empty list item", fd.name, f)
		}
		lo, hi, step := fd.min, fd.max, 1
		rng := part
		if i := strings.IndexByte(part, '/'); i >= 0 {
			rng = part[:i]
			n, err := strconv.Atoi(part[i+1:])
			if err != nil || n < 1 || n > fd.max {
				return 0, fmt.Errorf("%s field %q has step %q; a step is a whole number from 1 to %d", fd.name, f, part[i+1:], fd.max)
			}
			step = n
		}
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = cronNumber(a, f, fd); err != nil {
				return 0, err
			}
			if hi, err = cronNumber(b, f, fd); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, fmt.Errorf("%s field %q has range %q running backwards; write the smaller number first", fd.name, f, rng)
			}
		default:
			n, err := cronNumber(rng, f, fd)
			if err != nil {
				return 0, err
			}
			lo = n
			if step == 1 {
				hi = n // "5" alone; "5/15" runs from 5 to the maximum
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, nil
}

// cronNumber reads one number of a field and checks its bounds.
func cronNumber(s, f string, fd cronField) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%s field %q has %q where a number from %d to %d belongs", fd.name, f, s, fd.min, fd.max)
	}
	if n < fd.min || n > fd.max {
		return 0, fmt.Errorf("%s field %q has %d, out of range: give %d to %d", fd.name, f, n, fd.min, fd.max)
	}
	return n, nil
}

// String is the expression as written (fields separated by one space).
func (c *Cron) String() string { return c.text }

// dayMatches reports whether the calendar day of t fires.
func (c *Cron) dayMatches(t time.Time) bool {
	if c.month&(1<<int(t.Month())) == 0 {
		return false
	}
	dom := c.dom&(1<<t.Day()) != 0
	dow := c.dow&(1<<int(t.Weekday())) != 0
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

// cronLookback bounds Prev's search in days: long enough for February 29
// across a century year that is not a leap year.
const cronLookback = 366 * 9

// Prev is the latest time at or before t, to the minute, that the expression
// fires in loc's wall clock (nil loc means UTC), or the zero time if it has
// not fired in the nine years before t. A wall time that a daylight-saving
// change skips fires at the time it normalises to (02:30 on a spring-forward
// day fires at 03:30); one a change repeats fires once, at whichever of its
// two instants time.Date picks.
func (c *Cron) Prev(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	for i := 0; i < cronLookback; i++ {
		d := day.AddDate(0, 0, -i)
		if !c.dayMatches(d) {
			continue
		}
		for h := 23; h >= 0; h-- {
			if c.hour&(1<<h) == 0 {
				continue
			}
			for m := 59; m >= 0; m-- {
				if c.minute&(1<<m) == 0 {
					continue
				}
				at := time.Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, loc)
				if !at.After(t) {
					return at
				}
			}
		}
	}
	return time.Time{}
}
