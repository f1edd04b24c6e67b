package screentext

import (
	"strconv"
	"strings"
)

// shortCommitLen is how many hex digits of a full commit SHA a screen shows.
const shortCommitLen = 8

// ShortCommit is a commit name for a screen: the first 8 hex digits of a
// full SHA (40 hex digits, SHA-1, or 64, SHA-256, as git writes them),
// anything else whole, escaped as one unit (Field). A forge sends the
// SHAs of a pull request: a value that is not a full SHA is shown whole,
// so nothing of it is cut away unseen.
func ShortCommit(sha string) string {
	if (len(sha) == 40 || len(sha) == 64) && isHex(sha) {
		return sha[:shortCommitLen]
	}
	return Field(sha)
}

// isHex reports whether s is hex digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// PullRequestRef names a pull request for a list row: "platform/infra#12
// 1a2b3c4d", its repository as the forge names it ("owner/name", escaped
// as one unit), its number and its head commit (ShortCommit); without a
// head, the repository and number alone.
func PullRequestRef(repository string, number int, head string) string {
	ref := Field(repository) + "#" + strconv.Itoa(number)
	if head != "" {
		ref += " " + ShortCommit(head)
	}
	return ref
}

// PullRequest is the one phrase that says which pull request a run
// belongs to: "corp platform/infra#12 at 1a2b3c4d (head), merge 5e6f7a8b"
// — the forge block's name, the repository and number, the head commit it
// planned and, for the apply a merge proposed, the merge commit. Every
// value is escaped as one unit (Field), each commit shortened
// (ShortCommit); an empty head or merge is left out.
func PullRequest(forge, repository string, number int, head, merge string) string {
	var b strings.Builder
	if forge != "" {
		b.WriteString(Field(forge) + " ")
	}
	b.WriteString(PullRequestRef(repository, number, ""))
	if head != "" {
		b.WriteString(" at " + ShortCommit(head) + " (head)")
	}
	if merge != "" {
		b.WriteString(", merge " + ShortCommit(merge))
	}
	return b.String()
}
