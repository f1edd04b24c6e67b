package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/notify"
	"github.com/switchtender/switchtender/store"
)

// The change set (package planview): computed once per saved plan from its
// JSON rendering where the plan is measured (measureStep, for the control
// node's plans, dry runs included, and a relay worker's gated plans alike;
// a reconcile's from the rendering its check kept), masked with the run's masker, and stored sealed with the
// server key beside the proposal, in the same write. Opening a run reads
// it back (Changes) and runs no tool. It stays as long as the proposal is
// shown: the end of a run drops the sealed plan, never its change set.

// blobChanges is the store's kind for a saved plan's change set (the
// planview.ChangeSet as JSON, sealed), keyed by the run ID of the proposal
// (or drift check) it belongs to.
const blobChanges = "changes"

// fingerprintPurpose is the purpose of the derived key that fingerprints
// sensitive values (seal.Key.Derive).
const fingerprintPurpose = "plan fingerprint"

// changesBinding is what a change set is sealed to: the run and the digest
// of the plan it describes, so it opens for that plan only.
func changesBinding(runID, digest string) string { return "changes:" + runID + ":" + digest }

// changesOfPlan computes the change set of the plan rendering planJSON,
// every value m masks known to it as a secret (a value holding one is a
// sensitive path, never shown in part where a long value is cut), and
// masked with m; nil, with the reason, when the rendering cannot be read
// (the gate already fails closed on such a plan). The reason is masked.
func (s *Server) changesOfPlan(planJSON []byte, m *mask.Masker) (*planview.ChangeSet, error) {
	cs, err := planview.Build(planJSON, s.fingerprints, m.Values()...)
	if err != nil {
		return nil, errors.New(m.String(err.Error()))
	}
	cs.Mask(m.String)
	return cs, nil
}

// measureChanges computes the change set of x's plan rendering into
// x.changes once the plan's sensitive values joined the masker; a plan it
// cannot read keeps none, says so in the run's log and goes on.
func (x *execution) measureChanges() {
	cs, err := x.s.changesOfPlan(x.planJSON, x.masker)
	x.changes = cs
	if err != nil {
		x.say("the plan's change set could not be read (%v); approvers see tofu's plan text", err)
		x.s.log.Warn("a plan's rendering could not be read for its change set; the run goes on without one", "run", x.run.ID)
	}
}

// sealedChanges is cs as JSON sealed bound to run id and the plan's
// digest, ready to store; nil for no change set.
func (s *Server) sealedChanges(id, digest string, cs *planview.ChangeSet) ([]byte, error) {
	if cs == nil {
		return nil, nil
	}
	b, err := json.Marshal(cs)
	if err != nil {
		return nil, fmt.Errorf("encoding the change set: %w", err)
	}
	defer clear(b)
	sealed, err := seal.Seal(s.key, changesBinding(id, digest), b)
	if err != nil {
		return nil, fmt.Errorf("sealing the change set: %w", err)
	}
	return sealed, nil
}

// putChanges stores, inside tx, run id's sealed change set, or deletes an
// earlier one when sealed is nil (the plan it described is gone).
func putChanges(tx *store.Tx, id string, sealed []byte) error {
	if sealed == nil {
		return tx.DeleteBlob(blobChanges, id)
	}
	return tx.PutBlob(blobChanges, id, sealed)
}

// storeChangesIn seals *cs bound to run id and digest and stores it
// inside tx (sealedOrNone).
func (s *Server) storeChangesIn(tx *store.Tx, id, digest string, cs **planview.ChangeSet) error {
	return putChanges(tx, id, s.sealedOrNone(id, digest, cs))
}

// sealedOrNone is sealedChanges of *cs; one that cannot be sealed is
// logged and left out (*cs set to nil, the result nil): the run is then
// shown without a change set.
func (s *Server) sealedOrNone(id, digest string, cs **planview.ChangeSet) []byte {
	sealed, err := s.sealedChanges(id, digest, *cs)
	if err != nil {
		s.log.Error("a change set could not be stored; the run is shown without one", "run", id, "err", err)
		*cs = nil
	}
	return sealed
}

// changesDigest is the digest of the plan run r's change set describes:
// a dry run's plan, its plan-stage proposal's, or the plan a drift check
// kept (api.PlanOf); "" for none.
func changesDigest(r store.Run) string {
	if p := api.PlanOf(r); p != nil {
		return p.Digest
	}
	return ""
}

// Changes is the change set of run id's saved plan (a dry run's, its
// proposal's, or the plan a drift check kept): decoded from its sealed blob on first use
// and then served from memory, so the caller must not change it. It is
// nil, nil when the run has none: no saved plan, a plan whose rendering
// could not be read, a proposal made before change sets were kept. A
// missing run is a coded not_found; a change set the sealing key cannot
// open is a conflict saying so. No tool runs.
func (s *Server) Changes(id string) (*planview.ChangeSet, error) {
	r, err := s.getRun(id)
	if err != nil {
		return nil, err
	}
	return s.changesOf(r)
}

// changesOf is Changes of run r as read.
func (s *Server) changesOf(r store.Run) (*planview.ChangeSet, error) {
	digest := changesDigest(r)
	if digest == "" {
		return nil, nil
	}
	if cs := s.changeCache.get(r.ID, digest); cs != nil {
		return cs, nil
	}
	blob, err := s.db.GetBlob(blobChanges, r.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %s's change set: %w", r.ID, err)
	}
	plain, _, err := seal.Open(s.key, changesBinding(r.ID, digest), blob)
	if errors.Is(err, seal.ErrWrongRun) { // of an earlier plan of the run: not this one's
		s.log.Warn("a change set of another plan is stored for a run; none is shown", "run", r.ID, "digest", digest)
		return nil, nil
	}
	if err != nil {
		return nil, errorf(ErrConflict, "run %s's change set does not open with the sealing key (%v); `show %s` still shows tofu's plan text", r.ID, err, r.ID)
	}
	defer clear(plain)
	cs := &planview.ChangeSet{}
	if err := json.Unmarshal(plain, cs); err != nil {
		return nil, fmt.Errorf("decoding run %s's change set: %w", r.ID, err)
	}
	s.changeCache.put(r.ID, digest, cs)
	return cs, nil
}

// viewChanges is changesOf for a view: a change set that cannot be read
// is left out and logged.
func (s *Server) viewChanges(r store.Run) *planview.ChangeSet {
	cs, err := s.changesOf(r)
	if err != nil {
		s.log.Error("reading a run's change set", "run", r.ID, "err", err)
	}
	return cs
}

// changeCacheSize bounds the decoded change sets kept in memory: the ones
// approvers are looking at now.
const changeCacheSize = 8

// changeCache keeps the last change sets decoded, by run and plan digest,
// so a console's refreshes neither read nor decode a large one again.
type changeCache struct {
	mu    sync.Mutex
	order []string // keys, oldest first
	sets  map[string]*planview.ChangeSet
}

func changeKey(id, digest string) string { return id + " " + digest }

// get is the change set kept for run id's plan digest, or nil.
func (c *changeCache) get(id, digest string) *planview.ChangeSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sets[changeKey(id, digest)]
}

// put keeps cs for run id's plan digest, dropping the oldest beyond
// changeCacheSize.
func (c *changeCache) put(id, digest string, cs *planview.ChangeSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil {
		c.sets = map[string]*planview.ChangeSet{}
	}
	k := changeKey(id, digest)
	if _, ok := c.sets[k]; !ok {
		c.order = append(c.order, k)
	}
	c.sets[k] = cs
	for len(c.order) > changeCacheSize {
		delete(c.sets, c.order[0])
		c.order = c.order[1:]
	}
}

// changesSummary is the short form of run r's change set for a
// notification (notify.ChangesSummaryLimit bytes at most, ending with the
// command that shows the rest), or "" when it has none.
func (s *Server) changesSummary(r store.Run) string {
	cs := s.viewChanges(r)
	if cs == nil {
		return ""
	}
	return planview.Summary(cs, notify.ChangesSummaryLimit, "show "+r.ID+" --changes")
}
