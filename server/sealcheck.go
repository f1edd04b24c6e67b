package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// Problem is one thing in a configuration or data directory that will make
// runs fail or hold: Where is "file:line" (or a path, or a run), What the
// sentence for the operator, Severity what serve and reload do with it
// (judge.go).
type Problem struct {
	Where    string   `json:"where"`
	What     string   `json:"problem"`
	Severity Severity `json:"severity"`
}

func (p Problem) String() string { return p.What }

// sealedBlob is one sealed value a run still needs: where it is stored,
// what it is bound to and what it is, for the sentence.
type sealedBlob struct {
	run, kind, key, binding, what string
	inline                        []byte // sealed in the run record itself (SealedVars), or nil
	digest                        string // the digest its plaintext must have (a held plan's), or ""
}

// neededBlobs lists the sealed values of runs that may still use them: a
// held run's saved plan, a run not ended's secret answers, a check's kept
// plan, a project's remembered secret answers.
func neededBlobs(db *store.DB) ([]sealedBlob, error) {
	runs, err := db.ListRuns()
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var out []sealedBlob
	for _, r := range runs {
		out = append(out, runBlobs(r)...)
	}
	keys, err := db.ListBlobs(blobAnswers)
	if err != nil {
		return nil, fmt.Errorf("listing remembered secret answers: %w", err)
	}
	for _, k := range keys {
		out = append(out, sealedBlob{kind: blobAnswers, key: k, binding: k, what: "remembered secret answers of " + k})
	}
	return out, nil
}

// runBlobs lists the sealed values run r may still use.
func runBlobs(r store.Run) []sealedBlob {
	var out []sealedBlob
	st := r.Status
	if st == StatusAwaitingApproval && r.Proposal != nil && r.Proposal.Stage == StagePlan {
		out = append(out, sealedBlob{run: r.ID, kind: blobPlan, key: r.ID, binding: r.ID, what: "held plan", digest: r.Proposal.Digest})
	}
	if !st.Final() && len(r.SealedVars) > 0 {
		out = append(out, sealedBlob{run: r.ID, binding: r.ID, what: "secret answers", inline: r.SealedVars})
	}
	if r.Kind == KindCheck && r.Check != nil && r.Check.Kept {
		out = append(out, sealedBlob{run: r.ID, kind: blobDrift, key: r.ID, binding: driftBinding(r.ID), what: "kept drift plan"})
	}
	return out
}

// unsealable refuses to approve a held run whose sealed values (its saved
// plan, its secret answers) the key cannot open: missing, damaged, swapped
// or sealed to another key. Approving it would only fail later, so the
// refusal comes first, with the reason and what to do (unapprovable).
func (s *Server) unsealable(r store.Run) error {
	if why := s.unapprovable(r); why != "" {
		return errorf(ErrConflict, "run %s cannot be approved: %s. Nothing was approved", r.ID, why)
	}
	return nil
}

// unapprovable says why held run r can never be released, and what to do:
// the key cannot open a sealed value it needs. It is "" for a run that is
// not held or whose sealed values all open. show, show --json and the
// console present such a run as one that cannot be approved.
func (s *Server) unapprovable(r store.Run) string {
	if r.Status != StatusAwaitingApproval || r.Proposal == nil {
		return ""
	}
	for _, b := range runBlobs(r) {
		if err := b.opens(s.db, s.key); err != nil {
			return fmt.Sprintf("the sealing key cannot open its %s (%v); %s", b.what, err, sealAdvice(err))
		}
	}
	return ""
}

// sealAdvice is what to do about a sealed value that does not open for
// the reason err.
func sealAdvice(err error) string {
	if errors.Is(err, seal.ErrWrongKey) {
		return "the sealing key was changed since: restore the key it was sealed with, or reject the run and launch it again"
	}
	return "it is missing or damaged: reject the run and launch it again"
}

// opens reports why key cannot open b (nil when it opens as what it must
// be).
func (b sealedBlob) opens(db *store.DB, key *seal.Key) error {
	blob := b.inline
	if blob == nil {
		var err error
		if blob, err = db.GetBlob(b.kind, b.key); err != nil {
			return fmt.Errorf("reading it: %w", err)
		}
	}
	plain, digest, err := seal.Open(key, b.binding, blob)
	clear(plain)
	if err == nil && b.digest != "" && digest != b.digest {
		err = fmt.Errorf("it opens as %s, not as the plan shown, %s", digest, b.digest)
	}
	return err
}

// sealProblems lists every sealed value a run still needs that key cannot
// open, by run (run "" for a project's remembered answers).
func sealProblems(db *store.DB, key *seal.Key) ([]Problem, map[string]string, error) {
	blobs, err := neededBlobs(db)
	if err != nil {
		return nil, nil, err
	}
	var out []Problem
	byRun := map[string]string{}
	for _, b := range blobs {
		err := b.opens(db, key)
		if err == nil {
			continue
		}
		where := "run " + b.run
		if b.run == "" {
			where = db.Path()
		}
		advice := "it is damaged: reject or cancel the run and launch it again"
		if errors.Is(err, seal.ErrWrongKey) {
			advice = "the sealing key was changed since: restore the key it was sealed with, or reject or cancel the run and launch it again"
		}
		what := fmt.Sprintf("%s: the sealing key cannot open its %s (%v); %s", where, b.what, err, advice)
		out = append(out, Problem{Where: where, What: what, Severity: SeverityWarning})
		if b.run != "" && byRun[b.run] == "" {
			byRun[b.run] = fmt.Sprintf("the sealing key cannot open its %s (%v); %s", b.what, err, advice)
		}
	}
	return out, byRun, nil
}

// CheckData checks a data directory for `switchtender check`: when it holds
// a store, the sealing key (which must exist) must open every held plan,
// kept plan and secret answer a run still needs. No data directory, or no
// store in it, is no problem. A store a running server holds open is not
// checked, and note says so (that server checked it at its start).
func CheckData(dataDir, sealKey, hostKey string) (found []Problem, note string) {
	found = checkHostKey(hostKey)
	dbPath := filepath.Join(dataDir, "switchtender.db")
	if _, err := os.Stat(dbPath); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(sealKey); err == nil { // serve would load it; a missing one it makes
			if _, err := seal.LoadKey(sealKey); err != nil {
				found = append(found, Problem{Where: sealKey, What: fmt.Sprintf("%s: %v; serve refuses to start with it", sealKey, err), Severity: SeverityError})
			}
		}
		return found, ""
	}
	key, err := seal.LoadKey(sealKey)
	if err != nil {
		return append(found, Problem{Where: sealKey, What: fmt.Sprintf("%s: %v; the store %s holds sealed values only this key opens", sealKey, err, dbPath), Severity: SeverityError}), ""
	}
	db, err := store.Open(dbPath)
	if errors.Is(err, store.ErrLocked) {
		return found, fmt.Sprintf("%s is in use by a running server, so its sealed values were not checked here (the server checked them at its start; its log names any it cannot open)", dbPath)
	} else if err != nil {
		return append(found, Problem{Where: dbPath, What: fmt.Sprintf("%s: %v", dbPath, err), Severity: SeverityError}), ""
	}
	defer db.Close()
	sealed, _, err := sealProblems(db, key)
	found = append(found, sealed...)
	if err != nil {
		found = append(found, Problem{Where: dbPath, What: fmt.Sprintf("%s: %v", dbPath, err), Severity: SeverityError})
	}
	return found, ""
}

// checkSealed finds at start the sealed values runs still need that the
// key cannot open, and names each in the operator log.
func (s *Server) checkSealed() error {
	found, byRun, err := sealProblems(s.db, s.key)
	if err != nil {
		return fmt.Errorf("checking the sealed values runs still need: %w", err)
	}
	s.sealed = found
	for id, why := range byRun {
		s.log.Error("a held run cannot be approved or go on: the sealing key cannot open what it sealed", "run", id, "reason", why)
	}
	return nil
}

// checkHostKey reports a host key file serve could not use: one that
// exists and is not an SSH private key (a missing one serve makes).
func checkHostKey(path string) []Problem {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || path == "" {
		return nil
	}
	if err == nil {
		_, err = gossh.ParsePrivateKey(b)
		clear(b)
	}
	if err != nil {
		return []Problem{{Where: path, What: fmt.Sprintf("host_key %s: %v; serve refuses to start with it", path, err), Severity: SeverityError}}
	}
	return nil
}
