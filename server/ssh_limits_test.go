package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

// lockedBuffer is an io.Writer safe for a logger's concurrent use.
type lockedBuffer = testkit.LockedBuffer

// The total cap is fitted to the file-descriptor limit at start.
func TestSSHLimitsFitDescriptors(t *testing.T) {
	l := Options{}.sshLimits()
	if l.Handshake != 30*time.Second || l.Startups != 64 || l.Total != 256 || l.PerSource != 32 || l.Idle != 10*time.Minute || l.MaxCommand != 65536 {
		t.Fatalf("defaults: %+v", l)
	}
	if got, lowered := l.FitDescriptors(1 << 20); lowered || got.Total != 256 {
		t.Errorf("with 1M descriptors: %+v, lowered %v", got, lowered)
	}
	got, lowered := l.FitDescriptors(256)
	if !lowered || got.Total != 128 || got.Startups != 64 {
		t.Errorf("with 256 descriptors: %+v, lowered %v", got, lowered)
	}
	got, _ = l.FitDescriptors(64)
	if got.Total != 32 || got.Startups != 32 {
		t.Errorf("with 64 descriptors: %+v", got)
	}
}

// One address's share of the connections in their handshake follows its
// per-source cap: a quarter of ssh_max_startups with the defaults, half the
// per-source cap when that is more, never more than half of
// ssh_max_startups; past the share a connection from that address is
// refused while another address is still let in (the refusal:
// sshd's TestSSHLimitsRefusePastTheHandshakeShare).
func TestSSHLimitsHandshakeShareFollowsThePerSourceCap(t *testing.T) {
	for _, c := range []struct{ startups, perSource, want int }{
		{0, 0, 16},       // the defaults (64, 32)
		{64, 128, 32},    // behind a proxy, startups left alone: half of them
		{128, 128, 64},   // behind a proxy with both raised
		{64, 4, 16},      // a small per-source cap never lowers the quarter
		{16, 1000, 8},    // never more than half of the cap
		{1, 1000, 1},     // at least one
		{3, 2, 1},        // tiny caps round down to one, not zero
		{100, 40, 25},    // a quarter is more than half the per-source cap
		{100, 80, 40},    // half the per-source cap is more than a quarter
		{1000, 32, 250},  // the per-source cap only ever raises the share
		{64, 33, 16},     // odd per-source cap: 16 either way
		{200, 1000, 100}, // half of the cap
	} {
		l := Options{SSHMaxStartups: c.startups, SSHMaxConnsPerSource: c.perSource}.sshLimits()
		if got := l.StartupsPerSource(); got != c.want {
			t.Errorf("startups %d, per source %d: share %d, want %d", c.startups, c.perSource, got, c.want)
		}
	}
}

// newLimitHarness is a harness (configuration with extra) whose server runs
// with opts (Environ is filled in) and logs to the returned buffer.
func newLimitHarness(t *testing.T, opts Options, extra string) (*harness, *lockedBuffer) {
	t.Helper()
	// Written, not started: a server started here would already act on
	// the configuration (a scheduled check launched at its first tick).
	h := writeHarness(t, "", extra)
	t.Cleanup(func() { h.stop() })
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	opts.Environ = testEnviron
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.startWithDoor(context.Background()); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	h.srv, h.addr = srv, srv.SSHAddr()
	return h, logs
}
