package config

import (
	"strings"
	"testing"
	"time"
)

// TestParseCron is the cron parser's table: expressions it must accept, with
// a time each must fire at and one it must not, and expressions it must
// refuse, with words the refusal must contain.
func TestParseCron(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse("2006-01-02 15:04 Mon", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	good := []struct {
		expr      string
		fires, no string // "2006-01-02 15:04 Mon" in UTC
	}{
		{"0 */6 * * *", "2025-01-06 18:00 Mon", "2025-01-06 17:00 Mon"},
		{"* * * * *", "2025-01-06 17:43 Mon", ""},
		{"*/15 9-17 * * 1-5", "2025-01-06 09:45 Mon", "2025-01-04 09:45 Sat"},
		{"5,35 0 1 1,7 *", "2025-07-01 00:35 Tue", "2025-07-02 00:35 Wed"},
		{"0 0 * * 7", "2025-01-05 00:00 Sun", "2025-01-06 00:00 Mon"},
		{"0 0 * * 0", "2025-01-05 00:00 Sun", "2025-01-06 00:00 Mon"},
		{"10-50/20 * * * *", "2025-01-06 03:30 Mon", "2025-01-06 03:40 Mon"},
		{"5/20 * * * *", "2025-01-06 03:45 Mon", "2025-01-06 03:40 Mon"},
		// day-of-month and day-of-week both restricted: either fires
		{"0 12 13 * 5", "2025-06-20 12:00 Fri", "2025-06-19 12:00 Thu"},
		{"0 12 13 * 5", "2025-06-13 12:00 Fri", "2025-06-12 12:00 Thu"},
		{"0 12 13 * 5", "2025-05-13 12:00 Tue", ""},
		// one of them "*": both must
		{"0 12 13 * *", "2025-05-13 12:00 Tue", "2025-05-16 12:00 Fri"},
		{"0 0 29 2 *", "2024-02-29 00:00 Thu", "2024-02-28 00:00 Wed"},
		{"0 0 30,31 2,4 *", "2025-04-30 00:00 Wed", ""},
		{"  0   6  *  *  *  ", "2025-01-06 06:00 Mon", "2025-01-06 07:00 Mon"},
	}
	for _, tc := range good {
		c, err := ParseCron(tc.expr)
		if err != nil {
			t.Errorf("ParseCron(%q): %v", tc.expr, err)
			continue
		}
		f := at(tc.fires)
		if p := c.Prev(f.Add(59*time.Second), time.UTC); !p.Equal(f) {
			t.Errorf("%q: Prev(%s) = %s, want it to fire at %s", tc.expr, f, p, f)
		}
		if tc.no != "" {
			n := at(tc.no)
			if p := c.Prev(n, time.UTC); p.Equal(n) {
				t.Errorf("%q fires at %s; it must not", tc.expr, n)
			}
		}
	}

	bad := []struct {
		expr string
		want []string
	}{
		{"", []string{"empty", "five fields"}},
		{"   ", []string{"empty"}},
		{"0 */6 * *", []string{"has 4 fields", "exactly five"}},
		{"0 0 */6 * * *", []string{"has 6 fields", "no seconds field"}},
		{"@daily", []string{"has 1 fields"}},
		{"60 * * * *", []string{"minute field", "60, out of range", "0 to 59"}},
		{"* 24 * * *", []string{"hour field", "0 to 23"}},
		{"* * 0 * *", []string{"day-of-month field", "1 to 31"}},
		{"* * 32 * *", []string{"day-of-month field", "1 to 31"}},
		{"* * * 13 *", []string{"month field", "1 to 12"}},
		{"* * * 0 *", []string{"month field", "1 to 12"}},
		{"* * * * 8", []string{"day-of-week field", "0 to 7"}},
		{"*/0 * * * *", []string{"minute field", `step "0"`, "1 to 59"}},
		{"*/x * * * *", []string{"minute field", `step "x"`}},
		{"*/ * * * *", []string{"minute field", `step ""`}},
		{"*/-5 * * * *", []string{"minute field", `step "-5"`}},
		{"*/60 * * * *", []string{"minute field", `step "60"`}},
		{"1/2/3 * * * *", []string{"minute field", "step"}},
		{"5-1 * * * *", []string{"backwards"}},
		{"1- * * * *", []string{"minute field", `""`}},
		{"-1 * * * *", []string{"minute field"}},
		{"+5 * * * *", []string{"minute field", `"+5"`}},
		{"1,,2 * * * *", []string{"empty list item"}},
		{"1, * * * *", []string{"empty list item"}},
		{"* * * JAN *", []string{"month field", `"JAN"`}},
		{"* * * * MON", []string{"day-of-week field", `"MON"`}},
		{"99999999999999999999 * * * *", []string{"minute field"}},
		{"0 0 31 2 *", []string{"never fires"}},
		{"0 0 30,31 2 *", []string{"never fires"}},
		{"0 0 31 4,6,9,11 *", []string{"never fires"}},
	}
	for _, tc := range bad {
		c, err := ParseCron(tc.expr)
		if err == nil {
			t.Errorf("ParseCron(%q) = %v, want an error", tc.expr, c)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseCron(%q) error %q lacks %q", tc.expr, err, w)
			}
		}
	}
}

// TestCronPrevTimeZone checks that the expression is read in the server's
// time zone: 09:00 in Paris is 08:00 UTC in winter and 07:00 UTC in summer.
func TestCronPrevTimeZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCron("0 9 * * *")
	if err != nil {
		t.Fatal(err)
	}
	winter := time.Date(2025, 1, 15, 8, 30, 0, 0, time.UTC)
	if got, want := c.Prev(winter, paris), time.Date(2025, 1, 15, 8, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("winter: Prev = %s, want %s", got.UTC(), want)
	}
	// at 07:59 UTC it is 08:59 in Paris: the last firing was the day before
	if got, want := c.Prev(winter.Add(-31*time.Minute), paris), time.Date(2025, 1, 14, 8, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("winter, before 09:00 Paris: Prev = %s, want %s", got.UTC(), want)
	}
	summer := time.Date(2025, 7, 15, 7, 0, 0, 0, time.UTC)
	if got := c.Prev(summer, paris); !got.Equal(summer) {
		t.Errorf("summer: Prev = %s, want %s", got.UTC(), summer)
	}
	// UTC itself, and a nil location meaning UTC
	if got, want := c.Prev(winter, nil), time.Date(2025, 1, 14, 9, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("UTC: Prev = %s, want %s", got, want)
	}
	// a wall time the spring change skips fires at the time it becomes
	spring, _ := ParseCron("30 2 * * *")
	day := time.Date(2025, 3, 30, 12, 0, 0, 0, paris) // clocks went 02:00 -> 03:00
	if got, want := spring.Prev(day, paris), time.Date(2025, 3, 30, 3, 30, 0, 0, paris); !got.Equal(want) {
		t.Errorf("spring forward: Prev = %s, want %s", got, want)
	}
}

// TestConfigSchedule checks check_cron and time_zone reach the Config.
func TestConfigSchedule(t *testing.T) {
	f := newFixture(t)
	src := strings.NewReplacer("CHECKOUT", f.checkout).Replace(`
server {
  time_zone = "Europe/Paris"
}
project "infra" { path = "CHECKOUT" }
template "net" {
  project    = "infra"
  command    = "net"
  check_cron = "0 9 * * 1-5"
}
template "dns" {
  project     = "infra"
  command     = "dns"
  check_every = "30m"
}
`)
	cfg, err := Parse([]byte(src), "s.hcl", f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Server.TimeZone.String(); got != "Europe/Paris" {
		t.Errorf("TimeZone = %s", got)
	}
	net := cfg.Templates["net"]
	if net.CheckCron == nil || net.CheckCron.String() != "0 9 * * 1-5" || net.CheckEvery != 0 {
		t.Errorf("net schedule = %v / %v", net.CheckCron, net.CheckEvery)
	}
	if dns := cfg.Templates["dns"]; dns.CheckCron != nil || dns.CheckEvery != 30*time.Minute {
		t.Errorf("dns schedule = %v / %v", dns.CheckCron, dns.CheckEvery)
	}
}
