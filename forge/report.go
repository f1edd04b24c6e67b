package forge

import (
	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/store"
)

// Report is what Switchtender's comment on one pull request shows: the
// plans of its newest head, one per template, and once it merged, the
// applies the merge proposed. The server builds it from the runs it holds;
// RenderComment turns it into the forge's markdown.
type Report struct {
	Repository string
	Number     int
	HeadSHA    string
	// SSH is how an approver reaches the server, such as
	// "ssh -p 2222 switchtender.example.com": the comment's commands start
	// with it.
	SSH   string
	Plans []RunReport // the newest head's plans, by template name
	// Superseded lists older heads whose plans a newer head replaced,
	// oldest first.
	Superseded []string
	MergeSHA   string      // the merge commit, once merged into the default branch
	Applies    []RunReport // the applies the merge proposed, by template name
	// Note is a sentence the server adds (the checkout could not be
	// moved to the merge commit, the pull request comes from a fork, ...).
	Note string
}

// RunReport is one run as the comment and the commit status show it.
type RunReport struct {
	Template string
	RunID    string
	Status   store.Status
	Message  string // the run's message, masked as the store keeps it
	// Digest is the saved plan's digest ("sha256:<hex>"), once the plan
	// was saved; "" before or when none was.
	Digest                                string
	Changes                               *planview.ChangeSet // nil when none was kept
	Add, Change, Destroy, Replace, Forget int
	// Findings are the configuration scan's findings that refused it.
	Findings []store.Finding
	// ApprovedBy names who released an apply (approve), RejectedBy who
	// rejected it.
	ApprovedBy, RejectedBy string
	Stale                  bool
	StaleReason            string
	// Differences, for an apply, says resource by resource how its change
	// set differs from the plan last shown on the pull request; Compared
	// says a comparison was made (false: no shown plan to compare with).
	Differences []string
	Compared    bool
	// SupersededBy is the newer head that replaced this run's head.
	SupersededBy string
}
