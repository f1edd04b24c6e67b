package scenario

import (
	"log/slog"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// logBuffer keeps a server's operator log (testkit.LockedBuffer).
type logBuffer = testkit.LockedBuffer

// newLoggedHarness is newHarnessWith with a JSON operator log at debug.
func newLoggedHarness(t *testing.T, serverExtra, extra string) (*harness, *logBuffer) {
	t.Helper()
	buf := &logBuffer{}
	h := writeHarness(t, serverExtra, extra)
	h.logger = slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.start()
	return h, buf
}
