package server

import "github.com/switchtender/switchtender/server/logs"

// broker is the run-log broker ([logs.Broker]), with the lower-case names
// the front door's files still call it by.
type broker struct{ *logs.Broker }

// logEvent is one thing a log follower receives ([logs.Event]).
type logEvent = logs.Event

func newBroker() *broker { return &broker{logs.NewBroker()} }

// subscribeLog is [logs.Broker.SubscribeLog].
func (b *broker) subscribeLog(runID string) (<-chan logEvent, func()) { return b.SubscribeLog(runID) }

// watchRuns is [logs.Broker.WatchRuns].
func (b *broker) watchRuns() (<-chan struct{}, func()) { return b.WatchRuns() }
