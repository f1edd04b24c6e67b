package scenario

import (
	"net/http"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// TestADeliverySentTenTimesPlansOnceAndAForgedOneIsRefused guards the
// receiver: the same signed delivery sent ten more times is answered 200
// each time and plans once; the same body changed by one byte, or sent
// with another secret's signature, is 401 and stores nothing.
func TestADeliverySentTenTimesPlansOnceAndAForgedOneIsRefused(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	n, head := f.openPR("add", map[string]string{"network/extra.tf": testkit.PlainResource})
	opened := f.relay.waitKept(t, "the opened delivery", func(k keptDelivery) bool {
		return k.Header.Get("X-Gitea-Event-Type") == "pull_request" && k.Code == http.StatusOK
	})
	for i := range 10 {
		if code := f.relay.send(opened.Header, opened.Body); code != http.StatusOK {
			t.Fatalf("redelivery %d answered %d, want 200", i+1, code)
		}
	}
	f.waitStatus(head, "switchtender/plan/network", "success")
	if runs := f.prRuns(n); len(runs) != 1 {
		t.Fatalf("%d runs after eleven deliveries of one event, want one:%s", len(runs), f.runsSummary())
	}
	before, err := f.db().ForgeDeliveries()
	if err != nil {
		t.Fatal(err)
	}
	forged := append([]byte{}, opened.Body...)
	forged[len(forged)/2] ^= 1
	h := opened.Header.Clone()
	h.Set("X-Gitea-Delivery", "forged-delivery")
	if code := f.relay.send(h, forged); code != http.StatusUnauthorized {
		t.Errorf("a body changed by one byte answered %d, want 401", code)
	}
	sig := []byte(h.Get("X-Gitea-Signature"))
	sig[0] = map[bool]byte{true: '1', false: '0'}[sig[0] == '0']
	h.Set("X-Gitea-Signature", string(sig))
	h.Del("X-Hub-Signature-256")
	if code := f.relay.send(h, opened.Body); code != http.StatusUnauthorized {
		t.Errorf("a wrong signature answered %d, want 401", code)
	}
	after, _ := f.db().ForgeDeliveries()
	if len(after) != len(before) {
		t.Fatalf("refused deliveries were stored: %d deliveries before, %d after", len(before), len(after))
	}
}
