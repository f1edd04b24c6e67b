package server

import (
	"context"
	"time"

	"github.com/switchtender/switchtender/server/logs"
	"github.com/switchtender/switchtender/store"
)

// followPoll is how often a follower re-checks a run's status while no log
// arrives, as a safety net for an end event it could not receive.
const followPoll = time.Second

// FollowLog hands a run's masked log to fn from byte offset from: first
// what is stored, then what arrives live, until the run is no longer active
// (it finished, or waits for an approver) or ctx ends. It subscribes before
// reading the store and de-duplicates by offset (OTF's tailer), so a late
// joiner misses nothing and sees nothing twice; if the broker drops it for
// being slow, it rejoins from its offset. fn's error stops it.
func (s *Server) FollowLog(ctx context.Context, id string, from int64, fn func(store.Chunk) error) error {
	emit := func(c store.Chunk) error {
		end := c.Offset + int64(len(c.Data))
		if end <= from {
			return nil
		}
		if c.Offset < from {
			c.Data = c.Data[from-c.Offset:]
			c.Offset = from
		}
		if err := fn(c); err != nil {
			return err
		}
		from = end
		return nil
	}
	catchUp := func() error {
		chunks, err := s.db.ReadLog(id, from)
		if err != nil {
			return err
		}
		for _, c := range chunks {
			if err := emit(c); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		ch, cancel := s.broker.SubscribeLog(id)
		if err := catchUp(); err != nil {
			cancel()
			return err
		}
		run, err := s.db.GetRun(id)
		if err != nil {
			cancel()
			return s.coded(id, err)
		}
		if !run.Status.Active() {
			cancel()
			return catchUp()
		}
		rejoin, err := s.followLive(ctx, id, ch, &from, emit, catchUp)
		cancel()
		if err != nil || !rejoin {
			return err
		}
	}
}

// followLive reads live events until the log ends (false), the subscriber
// was dropped or missed a chunk (true: rejoin), or ctx ends.
func (s *Server) followLive(ctx context.Context, id string, ch <-chan logs.Event, from *int64, emit func(store.Chunk) error, catchUp func() error) (bool, error) {
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-ch:
			if !ok {
				return true, nil
			}
			if ev.End {
				if err := catchUp(); err != nil {
					return false, err
				}
				run, err := s.db.GetRun(id)
				if err != nil {
					return false, err
				}
				return run.Status.Active(), nil
			}
			if ev.Offset > *from {
				return true, nil // a gap: read the store again
			}
			if err := emit(store.Chunk{Offset: ev.Offset, Data: ev.Data}); err != nil {
				return false, err
			}
		case <-tick.C:
			run, err := s.db.GetRun(id)
			if err != nil {
				return false, err
			}
			if !run.Status.Active() {
				return false, catchUp()
			}
		}
	}
}
