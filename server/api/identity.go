package api

import (
	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/store"
)

// Identity is who asks, as the SSH key identified them.
type Identity struct {
	Name  string
	Agent bool
	// Forge marks a forge account (a pull request's author or merger): it
	// holds no roles and connects over no key; only the forge side
	// launches as one (docs/forges.md).
	Forge bool
	// Roles are the roles the identity holds: its user block's and those
	// of every group it belongs to, without repeats.
	Roles []string
	// Groups are the groups the identity belongs to and where each came
	// from, in name order.
	Groups []Group
	// Credential is the key or certificate the identity connected with;
	// nil where none was (tests, the schedule, the forge).
	Credential *store.Credential
	// Key is the SSH key the identity was found by, nil where none was
	// (tests, the schedule): current finds the identity again by it.
	Key gossh.PublicKey
}

// Has reports whether the identity holds role ("launch", "approve"). Agents
// hold no roles but may launch.
func (id Identity) Has(role string) bool {
	for _, r := range id.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// Group is one group an identity belongs to (a group block), and how.
type Group struct {
	Name string `json:"name"`
	// From is GroupFromConfiguration (the group block lists the user as a
	// member) or GroupFromCertificate (a principal of the certificate
	// grants it, by the user_ca block's groups map).
	From string `json:"from"`
	// Principal is the certificate's principal that grants the group;
	// set with GroupFromCertificate.
	Principal string `json:"principal,omitempty"`
}

// Where a group membership comes from (Group.From).
const (
	GroupFromConfiguration = "configuration"
	GroupFromCertificate   = "certificate"
)

// InGroup reports whether the identity belongs to group name.
func (id Identity) InGroup(name string) bool {
	for _, g := range id.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

// LaunchRequest is a run as a person or an agent asks for it.
type LaunchRequest struct {
	Template string
	Kind     store.Kind        // KindApply, KindPlan or KindCheck; empty means KindApply
	Answers  map[string]string // survey answers as typed: NAME -> VALUE; a field left out takes its default
	// RequireApproval asks that the apply its plan proposes wait for a
	// person whatever the rules say (spec "A gated apply ...").
	RequireApproval bool
	// AIProposal marks an apply an AI proposed; it is handled as
	// RequireApproval.
	AIProposal bool
	// Ref, with Kind KindPlan, makes the run a pull request's plan: it
	// plans the commit Ref names (a branch, tag or SHA) in a private tree,
	// scanned first (spec "What a plan runs, and what the gate reads").
	Ref string
	// Secret names answers that stay secret whatever the template says
	// now (a rerun's answers that were sealed); the service sets it, a
	// door leaves it empty.
	Secret []string
	// PullRequest, set by the forge side only, is the pull request the run
	// belongs to.
	PullRequest *store.PullRequest
}
