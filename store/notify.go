package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketNotify holds notification deliveries not yet delivered:
// be64(seq) -> JSON Delivery. A delivery leaves it when delivered or given up.
var bucketNotify = []byte("notify")

// Delivery is one notification waiting to reach one notify block's URL.
// Body is the event's JSON payload, which holds nothing secret (run ID,
// template, requester, counts, digest, a one-line summary); the URL and
// secret stay in the configuration.
type Delivery struct {
	ID        string          `json:"id"`     // decimal sequence, assigned by AddDeliveries
	Notify    string          `json:"notify"` // the notify block's name
	Event     string          `json:"event"`
	Run       string          `json:"run"`
	Body      json.RawMessage `json:"body"`
	Attempts  int             `json:"attempts"`
	NextAt    time.Time       `json:"next_at"` // not before
	CreatedAt time.Time       `json:"created_at"`
	LastError string          `json:"last_error,omitempty"` // why the last attempt failed (status or network error; no URL)
}

// AddDeliveries stores ds in one transaction, giving each its ID.
func (db *DB) AddDeliveries(ds []Delivery) error {
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNotify)
		for i := range ds {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			ds[i].ID = strconv.FormatUint(seq, 10)
			v, err := json.Marshal(ds[i])
			if err != nil {
				return err
			}
			if err := b.Put(be64(seq), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing notification deliveries: %w", err)
	}
	return nil
}

// Deliveries lists every stored delivery, oldest first.
func (db *DB) Deliveries() ([]Delivery, error) {
	var out []Delivery
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNotify).ForEach(func(_, v []byte) error {
			var d Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			out = append(out, d)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing notification deliveries: %w", err)
	}
	return out, nil
}

// deliveryKey is the bucket key of delivery id.
func deliveryKey(id string) ([]byte, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("delivery id %q: %w", id, ErrNotFound)
	}
	return be64(n), nil
}

// PutDelivery rewrites a stored delivery (its attempts, next time, error);
// one that is gone stays gone (ErrNotFound).
func (db *DB) PutDelivery(d Delivery) error {
	k, err := deliveryKey(d.ID)
	if err != nil {
		return err
	}
	v, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding delivery %s: %w", d.ID, err)
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNotify)
		if b.Get(k) == nil {
			return fmt.Errorf("delivery %s: %w", d.ID, ErrNotFound)
		}
		return b.Put(k, v)
	})
	if err != nil {
		return fmt.Errorf("updating delivery %s: %w", d.ID, err)
	}
	return nil
}

// DeleteDelivery removes a delivery (delivered or given up).
func (db *DB) DeleteDelivery(id string) error {
	k, err := deliveryKey(id)
	if err != nil {
		return err
	}
	if err := db.bolt.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketNotify).Delete(k) }); err != nil {
		return fmt.Errorf("deleting delivery %s: %w", id, err)
	}
	return nil
}
