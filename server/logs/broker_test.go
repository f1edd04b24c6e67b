package logs

import (
	"testing"
	"time"
)

// A subscriber that never reads is dropped (its channel closed) once its
// buffer is full, publishing never blocks, and a subscriber that keeps up
// receives every event in order. Subscribers of other runs see nothing.
func TestBrokerDropsSlowSubscriber(t *testing.T) {
	b := NewBroker()
	slow, cancelSlow := b.SubscribeLog("1")
	fast, cancelFast := b.SubscribeLog("1")
	other, cancelOther := b.SubscribeLog("2")
	// No deferred unsubscribe: after a publish that blocked while holding the
	// broker's lock, it would hang the test instead of letting it fail.

	// The fast subscriber acknowledges each event, so it is never more than
	// one behind; the publisher runs in its own goroutine so a publish that
	// blocked would show as a timeout instead of hanging the test.
	const n = SubscriberBuffer + 50
	var got []Event
	acked := make(chan struct{})
	go func() {
		for ev := range fast {
			got = append(got, ev)
			acked <- struct{}{}
		}
		close(acked)
	}()
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range n {
			b.PublishLog("1", Event{Offset: int64(i), Data: []byte{byte(i)}})
			<-acked
		}
	}()
	select {
	case <-published:
	case <-time.After(10 * time.Second):
		t.Fatalf("publishing %d events to a subscriber that never reads blocked", n)
	}

	// The slow one holds exactly the first SubscriberBuffer events, then
	// its channel is closed.
	count := 0
	for ev := range slow {
		if ev.Offset != int64(count) {
			t.Fatalf("slow subscriber event %d has offset %d", count, ev.Offset)
		}
		count++
	}
	if count != SubscriberBuffer {
		t.Fatalf("slow subscriber received %d events before being dropped, want %d", count, SubscriberBuffer)
	}
	cancelSlow() // ending a dropped subscription again must not panic

	cancelFast()
	for range acked {
	}
	if len(got) != n {
		t.Fatalf("fast subscriber received %d events, want %d", len(got), n)
	}
	for i, ev := range got {
		if ev.Offset != int64(i) || len(ev.Data) != 1 || ev.Data[0] != byte(i) {
			t.Fatalf("fast subscriber event %d = %+v", i, ev)
		}
	}
	select {
	case ev := <-other:
		t.Fatalf("a subscriber of run 2 received an event of run 1: %+v", ev)
	default:
	}
	cancelOther()
	// Publishing to a run nobody follows is a no-op.
	b.PublishLog("3", Event{End: true})
}

// Ending a subscription closes its channel and stops delivery; ending it
// twice is harmless; the broker forgets runs with no followers.
func TestBrokerUnsubscribe(t *testing.T) {
	b := NewBroker()
	ch, cancel := b.SubscribeLog("1")
	b.PublishLog("1", Event{Offset: 0, Data: []byte("a")})
	cancel()
	cancel()
	ev, ok := <-ch
	if !ok || string(ev.Data) != "a" {
		t.Fatalf("event published before unsubscribing lost: %+v %v", ev, ok)
	}
	if _, ok := <-ch; ok {
		t.Fatalf("channel still open after unsubscribing")
	}
	b.PublishLog("1", Event{Offset: 1, Data: []byte("b")}) // must not panic on a closed channel
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.logs) != 0 {
		t.Fatalf("broker keeps %d runs with no followers", len(b.logs))
	}
}

// WatchRuns coalesces ticks: any number of changes while a watcher is not
// reading leave one tick, never block RunChanged, and a later change ticks
// again. Every watcher is ticked; an ended watch is closed and skipped.
func TestBrokerWatchRunsCoalesces(t *testing.T) {
	b := NewBroker()
	w1, cancel1 := b.WatchRuns()
	w2, cancel2 := b.WatchRuns()
	defer cancel2()

	done := make(chan struct{})
	go func() {
		for range 1000 {
			b.RunChanged()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("runChanged blocked on watchers that do not read")
	}
	for _, w := range []<-chan struct{}{w1, w2} {
		if _, ok := <-w; !ok {
			t.Fatalf("watch channel closed")
		}
		select {
		case <-w:
			t.Fatalf("1000 changes left more than one tick")
		default:
		}
	}
	b.RunChanged()
	select {
	case <-w1:
	default:
		t.Fatalf("a change after the watcher read left no tick")
	}
	cancel1()
	cancel1()
	if _, ok := <-w1; ok {
		t.Fatalf("ended watch still open")
	}
	b.RunChanged() // must not send on the closed channel
	<-w2
}
