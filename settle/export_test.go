package settle

import "context"

// SyncView runs one poll of the channel view (the tests that set Options.ViewPoll negative
// decide when the view learns of the chain's events).
func (f *Facilitator) SyncView(ctx context.Context) error { return f.syncView(ctx) }

// SyncPayerView runs one poll of the payer view.
func (f *Facilitator) SyncPayerView(ctx context.Context) error { return f.pollPayers(ctx) }

// NextHeadRoundWaiting is how many completions wait for the head round not yet started.
func (f *Facilitator) NextHeadRoundWaiting() int {
	h := &f.payers.heads
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next == nil {
		return 0
	}
	return h.next.waiting
}
