package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The forge side's records (docs/forges.md): every verified webhook
// delivery, stored before the receiver answers 200 so none it answered is
// lost, and what the server knows of each pull request.
var (
	bucketForgeDeliveries = []byte("forge_deliveries") // forge 0x00 delivery id -> JSON ForgeDelivery
	bucketPulls           = []byte("pulls")            // forge 0x00 repository 0x00 be64(number) -> JSON Pull
)

// ForgeDelivery is one verified webhook delivery. Event is the delivery
// read into package forge's Event (JSON), which holds no secret: names,
// numbers, commit SHAs and at most a comment's first kilobyte.
type ForgeDelivery struct {
	Forge      string          `json:"forge"`
	DeliveryID string          `json:"delivery_id"`
	Seq        uint64          `json:"seq"` // the order it was received in, over every forge
	Event      json.RawMessage `json:"event"`
	Received   time.Time       `json:"received"`
	// Done is when the server finished with it; Outcome says what it did
	// ("planned", "ignored: ...", a failure's sentence).
	Done    time.Time `json:"done,omitzero"`
	Outcome string    `json:"outcome,omitempty"`
}

// Pull is what the server knows of one pull request: its newest head and
// every earlier head it saw (oldest first), whether it was closed or
// merged, and the id of Switchtender's one comment on it.
type Pull struct {
	Forge      string   `json:"forge"`
	Repository string   `json:"repository"`
	Number     int      `json:"number"`
	Author     string   `json:"author"`
	Fork       bool     `json:"fork"`
	HeadSHA    string   `json:"head_sha"`
	OlderHeads []string `json:"older_heads"`
	CommentID  int64    `json:"comment_id,omitempty"`
	Closed     bool     `json:"closed"`
	Merged     bool     `json:"merged"`
	MergeSHA   string   `json:"merge_sha,omitempty"`
	MergedBy   string   `json:"merged_by,omitempty"`
	// MovedFrom is the checkout's HEAD before it was moved to MergeSHA:
	// what the merge changed is MovedFrom..MergeSHA, even when a restart
	// comes between the move and the launch of its applies.
	MovedFrom string    `json:"moved_from,omitempty"`
	Note      string    `json:"note,omitempty"` // a sentence the comment shows (why the merge's apply waits or was refused)
	UpdatedAt time.Time `json:"updated_at"`
}

// ErrDuplicate is a delivery whose id the store holds already.
var ErrDuplicate = errors.New("delivery already received")

func forgeDeliveryKey(forge, id string) []byte { return []byte(forge + "\x00" + id) }

// PullKey is the store key of a pull request.
func PullKey(forge, repository string, number int) []byte {
	return append([]byte(forge+"\x00"+strings.ToLower(repository)+"\x00"), be64(uint64(number))...)
}

// AddForgeDelivery stores d, giving it its Seq, unless a delivery of the
// same forge and id is stored already: then it returns ErrDuplicate and
// stores nothing. The write is durable when it returns (bbolt fsyncs on
// commit).
func (db *DB) AddForgeDelivery(d *ForgeDelivery) error {
	k := forgeDeliveryKey(d.Forge, d.DeliveryID)
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketForgeDeliveries)
		if b.Get(k) != nil {
			return ErrDuplicate
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		d.Seq = seq
		v, err := json.Marshal(d)
		if err != nil {
			return err
		}
		return b.Put(k, v)
	})
	if errors.Is(err, ErrDuplicate) {
		return err
	}
	if err != nil {
		return fmt.Errorf("storing forge delivery %s: %w", d.DeliveryID, err)
	}
	return nil
}

// PendingForgeDeliveries lists the deliveries not yet done, in the order
// they were received.
func (db *DB) PendingForgeDeliveries() ([]ForgeDelivery, error) {
	all, err := db.ForgeDeliveries()
	if err != nil {
		return nil, err
	}
	var out []ForgeDelivery
	for _, d := range all {
		if d.Done.IsZero() {
			out = append(out, d)
		}
	}
	return out, nil
}

// ForgeDeliveries lists every stored delivery in the order received.
func (db *DB) ForgeDeliveries() ([]ForgeDelivery, error) {
	var out []ForgeDelivery
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketForgeDeliveries).ForEach(func(_, v []byte) error {
			var d ForgeDelivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			out = append(out, d)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing forge deliveries: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// FinishForgeDelivery marks a stored delivery done with its outcome.
func (db *DB) FinishForgeDelivery(forge, id, outcome string) error {
	k := forgeDeliveryKey(forge, id)
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketForgeDeliveries)
		v := b.Get(k)
		if v == nil {
			return fmt.Errorf("delivery %s: %w", id, ErrNotFound)
		}
		var d ForgeDelivery
		if err := json.Unmarshal(v, &d); err != nil {
			return err
		}
		d.Done, d.Outcome = time.Now(), outcome
		nv, err := json.Marshal(d)
		if err != nil {
			return err
		}
		return b.Put(k, nv)
	})
	if err != nil {
		return fmt.Errorf("finishing forge delivery %s: %w", id, err)
	}
	return nil
}

// UpdatePull reads the pull request forge/repository#number (a zero Pull
// with those three set when none is stored), lets fn change it and stores
// it, in one transaction. An error from fn stores nothing and is returned.
func (db *DB) UpdatePull(forge, repository string, number int, fn func(p *Pull) error) (Pull, error) {
	var p Pull
	k := PullKey(forge, repository, number)
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPulls)
		p = Pull{Forge: forge, Repository: repository, Number: number}
		if v := b.Get(k); v != nil {
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("reading pull request %s#%d: %w", repository, number, err)
			}
		}
		if err := fn(&p); err != nil {
			return callerError{err}
		}
		p.UpdatedAt = time.Now()
		v, err := json.Marshal(p)
		if err != nil {
			return err
		}
		return b.Put(k, v)
	})
	var ce callerError
	if errors.As(err, &ce) {
		return Pull{}, ce.err
	}
	if err != nil {
		return Pull{}, fmt.Errorf("updating pull request %s#%d: %w", repository, number, err)
	}
	return p, nil
}

// GetPull reads one pull request; ErrNotFound when none is stored.
func (db *DB) GetPull(forge, repository string, number int) (Pull, error) {
	var p Pull
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPulls).Get(PullKey(forge, repository, number))
		if v == nil {
			return fmt.Errorf("pull request %s#%s: %w", repository, strconv.Itoa(number), ErrNotFound)
		}
		return json.Unmarshal(v, &p)
	})
	return p, err
}

// ListPulls lists every pull request the store knows.
func (db *DB) ListPulls() ([]Pull, error) {
	var out []Pull
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPulls).ForEach(func(_, v []byte) error {
			var p Pull
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing pull requests: %w", err)
	}
	return out, nil
}
