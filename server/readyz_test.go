package server

import (
	"strings"
	"testing"
)

// /readyz answers without writing: 200 probes leave the store's count of
// pages written where it was, where one empty commit (what each probe
// made before) moves it. The break it guards: every unauthenticated probe
// was a durable write and an fsync (16 clients made 3,200 a second and
// slowed runs 1.6 times).
func TestReadyzWritesNothing(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, metricsListen, "")
	before := h.srv.db.PagesWritten()
	for range 200 {
		if code, body := h.scrape("/readyz"); code != 200 || strings.TrimSpace(body) != "ok" {
			t.Fatalf("/readyz: %d %s", code, body)
		}
	}
	if after := h.srv.db.PagesWritten(); after != before {
		t.Fatalf("200 probes wrote %d pages", after-before)
	}
	if err := h.srv.db.Writable(); err != nil {
		t.Fatal(err)
	}
	if h.srv.db.PagesWritten() == before {
		t.Fatal("the count of pages written does not see an empty commit, so this test proves nothing")
	}
}

// /healthz and /readyz on a listener that is up answer 200; after Close
// /readyz does not claim readiness (the listener is gone).
func TestReadyzIsNotReadyAfterClose(t *testing.T) {
	h := newHarnessWith(t, metricsListen, dataTemplates)
	if code, _ := h.scrape("/readyz"); code != 200 {
		t.Fatalf("/readyz %d", code)
	}
	if err := h.srv.ready(); err != nil {
		t.Fatal(err)
	}
	h.srv.Close()
	if err := h.srv.ready(); err == nil {
		t.Error("ready() says ready after Close")
	}
	h.srv = nil
}
