package scan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sort"
)

// digestVersion starts every digest, so a change of definition changes it.
const digestVersion = "switchtender scan digest v1"

// Digest returns "sha256:<hex>" over the configuration files of a module
// tree: files maps each module key (ModuleKey: "" for the root, "a.b") to
// the sha256 of each configuration file OpenTofu loads for it, by base name
// (ConfigFiles: override files included, files shadowed by .tofu files and
// test files left out). Those are exactly what a saved plan's configuration
// snapshot holds, so Module's digest of a tree equals PlanDigest's of a
// plan made from it. A file or module Module left unread (a finding) is
// missing from its digest, so that digest does not match a plan that
// holds it; such a plan is held by the finding in any case.
//
// The hash is sha256 of: digestVersion, then for each module in key order
// its key, its number of files, and for each file in name order its name
// and its 32-byte sha256; every string is preceded by its length and every
// count is 8 bytes big-endian, so no two trees share an encoding. A module
// with no files counts (it appears in the snapshot's manifest too).
func Digest(files map[string]map[string][32]byte) string {
	h := sha256.New()
	writeString(h, digestVersion)
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeString(h, k)
		names := make([]string, 0, len(files[k]))
		for n := range files[k] {
			names = append(names, n)
		}
		sort.Strings(names)
		writeUint(h, uint64(len(names)))
		for _, n := range names {
			writeString(h, n)
			sum := files[k][n]
			h.Write(sum[:])
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func writeUint(h hash.Hash, n uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	h.Write(b[:])
}

func writeString(h hash.Hash, s string) {
	writeUint(h, uint64(len(s)))
	h.Write([]byte(s))
}
