package planview

import (
	"encoding/json"
	"sync"
	"testing"
)

func TestBuildsRunConcurrently(t *testing.T) {
	want, err := json.Marshal(mustBuild(t, []byte(hostilePlan)))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			cs, err := Build([]byte(hostilePlan), testFP)
			if err != nil {
				t.Error(err)
				return
			}
			if got, _ := json.Marshal(cs); string(got) != string(want) {
				t.Errorf("a concurrent Build gives\n%s\nwant\n%s", got, want)
			}
		})
	}
	wg.Wait()
}
