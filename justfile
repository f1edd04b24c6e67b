# Habits, not prerequisites: every recipe is one plain command.

# The main job on the embedded example.
demo:
    go run ./cmd/switchtender demo

# The tests (real OpenTofu; builds the pinned one on first use).
test:
    go test -timeout 60m ./...

# Benchmarks with their ratios against a baseline measured in the same run.
bench:
    go test -run '^$' -bench . -benchtime 3x ./...

lint:
    test -z "$(gofmt -l .)" && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@latest ./...

# Each fuzzer for a while (go test runs their seed corpora every time).
fuzz time="30s":
    go test -run '^$' -fuzz '^FuzzStreaming$' -fuzztime {{time}} ./exec/mask/
    go test -run '^$' -fuzz '^FuzzEncodeVar$' -fuzztime {{time}} ./exec/
    go test -run '^$' -fuzz '^FuzzJSONToValue$' -fuzztime {{time}} ./gate/
    go test -run '^$' -fuzz '^FuzzPlanReaders$' -fuzztime {{time}} ./gate/
    go test -run '^$' -fuzz '^FuzzNestingDepth$' -fuzztime {{time}} ./gate/
    go test -run '^$' -fuzz '^FuzzVerifyAudit$' -fuzztime {{time}} ./store/
    go test -run '^$' -fuzz '^FuzzParse$' -fuzztime {{time}} ./server/config/
    go test -run '^$' -fuzz '^FuzzSplit$' -fuzztime {{time}} ./server/
    go test -run '^$' -fuzz '^FuzzRenderedForms$' -fuzztime {{time}} ./exec/mask/
    go test -run '^$' -fuzz '^FuzzModule$' -fuzztime {{time}} ./scan/
