package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/seal"
)

// spoilPlan makes held run 1's sealed plan one the key cannot open, in
// one of the ways a store or a key goes wrong, and returns the advice the
// refusal must give.
var spoilPlan = map[string]func(t *testing.T, h *harness) string{
	"missing": func(t *testing.T, h *harness) string {
		if err := h.srv.db.DeleteBlob(blobPlan, "1"); err != nil {
			t.Fatal(err)
		}
		return "reject the run and launch it again"
	},
	"damaged": func(t *testing.T, h *harness) string {
		blob, err := h.srv.db.GetBlob(blobPlan, "1")
		if err != nil {
			t.Fatal(err)
		}
		blob[len(blob)/2] ^= 0x40
		if err := h.srv.db.PutBlob(blobPlan, "1", blob); err != nil {
			t.Fatal(err)
		}
		return "reject the run and launch it again"
	},
	"sealed to another run": func(t *testing.T, h *harness) string {
		blob, err := h.srv.db.GetBlob(blobPlan, "1")
		if err != nil {
			t.Fatal(err)
		}
		plain, _, err := seal.Open(h.srv.key, "1", blob)
		if err != nil {
			t.Fatal(err)
		}
		other, err := seal.Seal(h.srv.key, "2", plain)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.srv.db.PutBlob(blobPlan, "1", other); err != nil {
			t.Fatal(err)
		}
		return "reject the run and launch it again"
	},
	"a rotated key": func(t *testing.T, h *harness) string {
		h.stop()
		if err := os.Remove(filepath.Join(h.dir, "data", "seal.key")); err != nil {
			t.Fatal(err)
		}
		h.start() // a new key is made
		return "restore the key it was sealed with"
	},
}

// A held run whose sealed plan the key cannot open (missing, damaged,
// sealed to another run, or sealed with a key since rotated) is shown as
// one that cannot be approved, with the reason and what to do: in `show`,
// `show --json` and the console's data, with no approve command offered;
// `approve` is refused with the same reason and leaves it held, and the
// reject it advises works. Before, only a rotated key was refused: show
// offered the approve line and approve answered "Approved ... queued to
// apply" for a missing or damaged plan, and the run failed after.
func TestHeldRunWhoseSealedPlanCannotOpenCannotBeApproved(t *testing.T) {
	for name, spoil := range spoilPlan {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, dataTemplates+approveAllData)
			h.mustSSH("alice", "launch", "data")
			h.waitStatus("1", StatusAwaitingApproval)
			healthy := h.show("bob", "1")
			if healthy.Unapprovable != "" || healthy.Waiting == "" {
				t.Fatalf("a healthy held run: unapprovable %q, waiting %q", healthy.Unapprovable, healthy.Waiting)
			}
			digest := healthy.Proposal.Digest
			advice := spoil(t, h)
			checkShownUnapprovable(t, h, advice)
			out, errOut, code := h.ssh("bob", "approve", "1", "--digest", digest)
			if code != exitRefused || !strings.Contains(errOut, "cannot be approved: the sealing key cannot open its held plan") ||
				!strings.Contains(errOut, advice) || strings.Contains(out, "Approved") {
				t.Errorf("approve: exit %d\nstdout: %s\nstderr: %s\nwant refused, saying %q", code, out, errOut, advice)
			}
			if v := h.show("bob", "1"); v.Status != StatusAwaitingApproval || len(v.Approvals) != 0 {
				t.Errorf("after the refused approve run 1 is %s with %d approvals", v.Status, len(v.Approvals))
			}
			h.mustSSH("bob", "reject", "1", "--reason", "its plan cannot be opened")
			if v := h.show("bob", "1"); v.Status != StatusRejected || v.Unapprovable != "" {
				t.Errorf("after the reject run 1 is %s, unapprovable %q", v.Status, v.Unapprovable)
			}
		})
	}
}

// checkShownUnapprovable checks that held run 1 is shown as one that
// cannot be approved, saying advice, everywhere a person or agent reads
// it, and offers no approve command.
func checkShownUnapprovable(t *testing.T, h *harness, advice string) {
	t.Helper()
	text := h.mustSSH("bob", "show", "1")
	if !strings.Contains(text, "CANNOT BE APPROVED: the sealing key cannot open its held plan") || !strings.Contains(text, advice) ||
		strings.Contains(text, "approve 1 --digest") {
		t.Errorf("show 1 does not present it as unapprovable (saying %q) or offers the approve line:\n%s", advice, text)
	}
	v := h.show("bob", "1")
	if !strings.Contains(v.Unapprovable, advice) || v.Waiting != "" || v.WaitingForYou || strings.Contains(v.Message, "--digest") {
		t.Errorf("show 1 --json: unapprovable %q, waiting %q, waiting_for_you %v, message %q", v.Unapprovable, v.Waiting, v.WaitingForYou, v.Message)
	}
	con := newConsole(h.srv, h.identity("bob"))
	d, err := con.Run(context.Background(), "1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Proposal == nil || !strings.Contains(d.Proposal.Unapprovable, advice) || d.WaitingForMe || strings.Contains(d.Message, "--digest") {
		t.Errorf("the console's run 1: proposal %+v, waiting for bob %v, message %q", d.Proposal, d.WaitingForMe, d.Message)
	}
	rows, err := con.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.ID == "1" && r.WaitingForMe {
			t.Errorf("the console's list says run 1 waits for bob")
		}
	}
}
