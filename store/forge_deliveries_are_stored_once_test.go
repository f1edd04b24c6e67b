package store

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestAForgeDeliveryIsStoredOncePerDeliveryID guards the receiver's
// promise that a redelivered webhook plans nothing twice: the second
// delivery of one id is refused with ErrDuplicate and leaves the first as
// stored, while the same id from another forge is its own delivery.
func TestAForgeDeliveryIsStoredOncePerDeliveryID(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first := &ForgeDelivery{Forge: "corp", DeliveryID: "d-1", Event: []byte(`{"n":1}`)}
	if err := db.AddForgeDelivery(first); err != nil {
		t.Fatal(err)
	}
	again := &ForgeDelivery{Forge: "corp", DeliveryID: "d-1", Event: []byte(`{"n":2}`)}
	if err := db.AddForgeDelivery(again); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second delivery of d-1: err = %v, want ErrDuplicate", err)
	}
	other := &ForgeDelivery{Forge: "public", DeliveryID: "d-1", Event: []byte(`{"n":3}`)}
	if err := db.AddForgeDelivery(other); err != nil {
		t.Fatalf("d-1 of another forge: %v", err)
	}
	pending, err := db.PendingForgeDeliveries()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || string(pending[0].Event) != `{"n":1}` || pending[0].Seq >= pending[1].Seq {
		t.Fatalf("pending = %+v, want corp's first delivery then public's, in order", pending)
	}
	if err := db.FinishForgeDelivery("corp", "d-1", "planned"); err != nil {
		t.Fatal(err)
	}
	if pending, _ = db.PendingForgeDeliveries(); len(pending) != 1 || pending[0].Forge != "public" {
		t.Fatalf("pending after finishing corp's = %+v", pending)
	}
}

// TestAPullRequestIsKeyedCaseInsensitivelyByRepository: forges treat
// "Platform/Infra" and "platform/infra" as one repository, so the store
// keeps one record for both and one comment id.
func TestAPullRequestIsKeyedCaseInsensitivelyByRepository(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.UpdatePull("corp", "Platform/Infra", 7, func(p *Pull) error { p.CommentID = 42; return nil }); err != nil {
		t.Fatal(err)
	}
	p, err := db.GetPull("corp", "platform/infra", 7)
	if err != nil || p.CommentID != 42 {
		t.Fatalf("GetPull = %+v, %v; want the comment id stored under the other spelling", p, err)
	}
	if _, err := db.GetPull("corp", "platform/infra", 8); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetPull of another number: err = %v, want ErrNotFound", err)
	}
}
