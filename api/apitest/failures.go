package apitest

import (
	"net/http"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/testenv"
)

// UpstreamFailure is one way an upstream fails, and the status a route answers it with.
type UpstreamFailure struct {
	Name    string
	Handler http.Handler
	Status  int
}

// UpstreamFailures are the rows of every family's "failures are not charged" table: an
// upstream that throttles or fails is a 502 naming it, one that does not answer in time a 504.
// A family appends its own rows (an unknown identifier's 404, a provider's recorded refusal).
func UpstreamFailures() []UpstreamFailure {
	return []UpstreamFailure{
		{"rate limited", upstreamtest.TooMany(), http.StatusBadGateway},
		{"server error", upstreamtest.ServerError(), http.StatusBadGateway},
		{"no answer", upstreamtest.Hang(), http.StatusGatewayTimeout},
	}
}

// NeedsTime skips t under -short when the failure is an upstream that never answers: the
// call waits out the client's deadline in real time (make test runs it).
func (f UpstreamFailure) NeedsTime(t testing.TB) { t.Helper(); NeedsTime(t, f.Status) }

// NeedsTime skips t under -short when a route is expected to answer status 504: its
// upstream's deadline is waited out in real time.
func NeedsTime(t testing.TB, status int) {
	t.Helper()
	if status == http.StatusGatewayTimeout {
		testenv.Needs(t, testenv.Deadlines)
	}
}

// WantUpstreamError fails t unless a route answered want and, for an upstream's failure (502,
// 504), an error body naming upstream.
func WantUpstreamError(t testing.TB, status int, body []byte, want int, upstream string) {
	t.Helper()
	if status != want {
		t.Errorf("= %d %s, want %d", status, body, want)
		return
	}
	if want != http.StatusBadGateway && want != http.StatusGatewayTimeout {
		return
	}
	if up := At(Decode(t, body), "error", "upstream"); up != upstream {
		t.Errorf("= %d %s: error names %v, want %s", status, body, up, upstream)
	}
}

// WantNotCharged fails t unless the gate charged no call and waived calls of them.
func (g *RecordingGate) WantNotCharged(t testing.TB, calls int) {
	t.Helper()
	if charged, waived := g.Counts(); charged != 0 || waived != calls {
		t.Errorf("charged %d waived %d, want 0 and %d", charged, waived, calls)
	}
}
