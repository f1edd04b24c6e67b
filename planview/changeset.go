// Package planview is the approver's view of a saved plan: a structured change
// set computed once from the plan's JSON rendering (`tofu show -json
// PLANFILE`, format 1.0 to 1.2, never the printed text), stored with the
// proposal, and the one renderer every door uses (SSH `show --changes`, the
// console's proposal pane, MCP, notifications).
//
// The change set is risk first (replaced and deleted, then forgotten, then
// updated, created, read, imported, moved; then outputs and drift). It never
// holds a sensitive value: a sensitive path says only whether it changed and
// carries keyed fingerprints (HMAC-SHA256 under a key only the server holds)
// so two equal values show equal fingerprints and a guessable value stays
// unguessable. Values are raw (masked by the caller, [ChangeSet.Mask]);
// every renderer escapes them with screentext before they reach a screen.
package planview

// Sections of a change set, in the order a reviewer weighs them. A
// [Resource] is in exactly one section.
const (
	SectionReplace          = "replace"            // ["delete","create"] or ["create","delete"]
	SectionDelete           = "delete"             // ["delete"]
	SectionForget           = "forget"             // ["forget"]: leaves state, not destroyed
	SectionForgetThenCreate = "forget_then_create" // ["forget","create"]
	SectionUpdate           = "update"             // ["update"]
	SectionCreate           = "create"             // ["create"]
	SectionRead             = "read"               // ["read"] (a data source read during apply)
	SectionImport           = "import"             // ["no-op"] with importing
	SectionMove             = "move"               // ["no-op"] with a previous address
)

// Sections lists every section in risk order.
var Sections = []string{
	SectionReplace, SectionDelete, SectionForget, SectionForgetThenCreate,
	SectionUpdate, SectionCreate, SectionRead, SectionImport, SectionMove,
}

// ChangeSet is what a saved plan would do, as a reviewer weighs it. Its JSON
// form is the "changes" object of `show RUN --json` and MCP show_run
// (docs/json.md).
type ChangeSet struct {
	// FormatVersion is the plan JSON's format_version, e.g. "1.2".
	FormatVersion string `json:"format_version"`
	// Counts counts each section, outputs and drift.
	Counts Counts `json:"counts"`
	// Resources are the resource instance changes other than plain no-ops,
	// in section order ([Sections]), then by address within a section.
	Resources []Resource `json:"resources"`
	// Outputs are the root module outputs that change, by name.
	Outputs []Output `json:"outputs,omitempty"`
	// Drift are the changes made outside OpenTofu since the state was last
	// written (`resource_drift`), apart from what the configuration would do.
	Drift []Resource `json:"drift,omitempty"`
}

// Counts counts a change set. Destroy is the count the rules measure: every
// delete, replacements included (gate.Summary.Destroy); forgets are never
// destroys and are counted apart.
type Counts struct {
	Replace          int `json:"replace"`
	Delete           int `json:"delete"`
	Destroy          int `json:"destroy"` // Replace + Delete
	Forget           int `json:"forget"`
	ForgetThenCreate int `json:"forget_then_create"`
	Update           int `json:"update"`
	Create           int `json:"create"`
	Read             int `json:"read"`
	Import           int `json:"import"` // every importing change, whatever its section
	Move             int `json:"move"`   // every change with a previous address
	Outputs          int `json:"outputs"`
	Drift            int `json:"drift"`
}

// Resource is one resource instance change.
type Resource struct {
	Section string `json:"section"` // one of the Section* constants
	// Address is the resource instance address, e.g. module.a.terraform_data.x[0].
	Address string `json:"address"`
	// PreviousAddress is the address it moves from (a `moved` block), else "".
	PreviousAddress string `json:"previous_address,omitempty"`
	// Deposed is the deposed object key when the change is to a deposed
	// object (create_before_destroy left it), else "".
	Deposed string `json:"deposed,omitempty"`
	// Actions is the action list as the plan wrote it, e.g. ["delete","create"].
	Actions []string `json:"actions"`
	// Reason is the plan's action_reason (e.g. "replace_because_tainted",
	// "forgot_because_lifecycle_destroy_in_config"), else "".
	Reason string `json:"reason,omitempty"`
	// Importing reports that the change imports an existing object.
	Importing bool `json:"importing,omitempty"`
	// ReplacePaths are the attribute paths that force the replacement
	// (`replace_paths`), in [Attribute.Path] form.
	ReplacePaths []string `json:"replace_paths,omitempty"`
	// Attributes are the attribute paths that change (for a create, every
	// attribute set; for a delete, a forget or a no-op, none), sorted by
	// path: keys in byte order, list elements by index.
	Attributes []Attribute `json:"attributes,omitempty"`
	// Unchanged counts the attribute paths left as they are, collapsed.
	Unchanged int `json:"unchanged"`
}

// Attribute is one changed attribute path of a resource or an output.
type Attribute struct {
	// Path is the attribute path in OpenTofu's expression form:
	// input.name, tags["env"], rule[0].port.
	Path string `json:"path"`
	// Before and After are the values rendered as OpenTofu literals
	// ("x" quoted, 42, true, null, [...] / {...} for a collection) of at
	// most 200 runes; "" when absent (before of a create, after of a
	// delete), when sensitive, or (After) when unknown. Two values that differ never read the same:
	// when both would be cut (or summarised) alike, each is the window of
	// its whole rendering around their first difference, "…" where the
	// window cuts it.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Unknown reports that the after value is (known after apply).
	Unknown bool `json:"unknown,omitempty"`
	// ForcesReplacement reports that this path is one of the resource's
	// replace_paths.
	ForcesReplacement bool `json:"forces_replacement,omitempty"`
	// Sensitive reports that the value is sensitive on either side: Before
	// and After are then "", Changed says whether it changed and the
	// fingerprints tell values apart without showing them.
	Sensitive         bool   `json:"sensitive,omitempty"`
	Changed           bool   `json:"changed,omitempty"`
	BeforeFingerprint string `json:"before_fingerprint,omitempty"`
	AfterFingerprint  string `json:"after_fingerprint,omitempty"`
	// JSON is set when both sides are strings that parse as JSON objects
	// or arrays every JSON reader reads alike (no repeated key, no half
	// surrogate pair): the structural comparison, instead of a
	// whole-string Before/After.
	JSON *JSONDiff `json:"json,omitempty"`
	// Lines is set for a long or multi-line string on both sides: a line
	// diff with a few lines of context, instead of a whole-string Before/After.
	Lines []DiffLine `json:"lines,omitempty"`
}

// JSONDiff is the structural comparison of two JSON documents held in
// strings (a policy document, a jsonencode result).
type JSONDiff struct {
	// Changes are the changed JSON paths ($.Statement[0].Action), each with
	// Before/After rendered as JSON.
	Changes []Attribute `json:"changes,omitempty"`
	// FormatOnly reports that the documents are equal as JSON: only
	// whitespace or key order differ ("whitespace or key order only").
	FormatOnly bool `json:"format_only,omitempty"`
	// More counts the changed paths left out after the first 100 Changes.
	More int `json:"more,omitempty"`
}

// DiffLine is one line of a line diff.
type DiffLine struct {
	// Op is " " (context), "-" (removed), "+" (added) or "…" (lines skipped;
	// Text then says how many). Text is at most 200 runes; the k-th
	// removed and k-th added line of a run of changes that would be cut
	// alike are windows around their first difference, as Attribute's
	// Before and After are.
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Output is one root module output that changes.
type Output struct {
	Name    string    `json:"name"`
	Actions []string  `json:"actions"`
	Change  Attribute `json:"change"` // Path is the output's name
}
