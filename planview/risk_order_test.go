package planview

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTheViewListsRiskFirst checks the order of the sections in the text:
// replaced and deleted, then forgotten and forgotten then created, then
// updated, created, read, imported, moved, then outputs and drift, even
// when the change set lists its resources in another order.
func TestTheViewListsRiskFirst(t *testing.T) {
	cs := everySection(t)
	cs.Resources = append(cs.Resources,
		Resource{Section: SectionRead, Address: "data.http.ip", Actions: []string{"read"}, Reason: "read_because_config_unknown"},
		Resource{Section: SectionImport, Address: "aws_s3_bucket.imported", Actions: []string{"no-op"}, Importing: true})
	cs.Drift = []Resource{{Section: SectionUpdate, Address: "aws_instance.drifted", Actions: []string{"update"}}}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(cs.Resources), func(i, j int) {
		cs.Resources[i], cs.Resources[j] = cs.Resources[j], cs.Resources[i]
	})
	lines := strings.Split(Text(cs, 0), "\n")
	order := []string{
		"Destroys 2", "Leaves state, not destroyed: 2",
		"Replaced (1)", "-/+ aws_instance.web",
		"Deleted (1)", `- aws_s3_bucket.logs["eu-west-1"]`,
		"Forgotten (1)", "forget aws_iam_role.legacy",
		"Forgotten, then created (1)", "forget/+ aws_db_instance.main",
		"Updated in place (1)", "~ aws_iam_policy.deploy",
		"Created (1)", "+ aws_route53_record.www",
		"Read during apply (1)", "<= data.http.ip",
		"Imported (1)", "import aws_s3_bucket.imported",
		"Moved (1)", "moved aws_vpc.main → module.net.aws_vpc.main",
		"Outputs (1)", `~ endpoint = "https://old.example.com" -> "https://www.example.com"`,
		"Changed outside OpenTofu (1)", "~ aws_instance.drifted",
	}
	last := -1
	for _, want := range order {
		i := lineIndex(lines, want)
		if i < 0 {
			t.Fatalf("%q is not in the text:\n%s", want, strings.Join(lines, "\n"))
		}
		if i <= last {
			t.Fatalf("%q comes at line %d, before what should precede it (line %d):\n%s", want, i, last, strings.Join(lines, "\n"))
		}
		last = i
	}
}

// TestTheTextOfEverySectionReadsAsItsGolden keeps the words of the whole
// view at 80 columns and unwrapped (testdata/every_section_*.golden).
func TestTheTextOfEverySectionReadsAsItsGolden(t *testing.T) {
	golden(t, "every_section_80", Text(everySection(t), 80))
	golden(t, "every_section_unwrapped", Text(everySection(t), 0))
}

// TestAnEmptyChangeSetSaysItChangesNothing checks that a plan without
// changes says so instead of showing nothing, and that a nil one reads
// the same.
func TestAnEmptyChangeSetSaysItChangesNothing(t *testing.T) {
	got := Text(&ChangeSet{}, 80)
	if !strings.Contains(got, "Destroys 0") || !strings.Contains(got, "No changes") {
		t.Fatalf("an empty change set reads:\n%s", got)
	}
	if Text(nil, 80) != got {
		t.Fatalf("a nil change set reads otherwise:\n%s", Text(nil, 80))
	}
}
