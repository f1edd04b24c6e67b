package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// Deliveries survive closing and reopening the file; updates and deletes
// act on one delivery; an update of a deleted one is refused.
func TestDeliveriesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ds := []Delivery{{Notify: "a", Event: "failed", Run: "1", Body: []byte(`{"x":1}`), CreatedAt: time.Now()},
		{Notify: "b", Event: "failed", Run: "1", Body: []byte(`{"x":2}`)}}
	if err := db.AddDeliveries(ds); err != nil || ds[0].ID != "1" || ds[1].ID != "2" {
		t.Fatalf("AddDeliveries: %v %+v", err, ds)
	}
	db.Close()
	if db, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Deliveries()
	if err != nil || len(got) != 2 || string(got[1].Body) != `{"x":2}` {
		t.Fatalf("after reopen: %v %+v", err, got)
	}
	got[0].Attempts = 3
	if err := db.PutDelivery(got[0]); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteDelivery("2"); err != nil {
		t.Fatal(err)
	}
	if err := db.PutDelivery(got[1]); !errors.Is(err, ErrNotFound) {
		t.Errorf("updating a deleted delivery: %v", err)
	}
	if got, _ := db.Deliveries(); len(got) != 1 || got[0].Attempts != 3 {
		t.Errorf("after update and delete: %+v", got)
	}
}
