package chainrpc

import (
	"net/http"

	"github.com/peage/appliance/api/upstream/httpc"
)

// limited spends a token of the bucket per HTTP request, before sending it. A JSON-RPC batch is
// one request, which is what public endpoints count.
type limited struct {
	next http.RoundTripper
	b    *httpc.Bucket
}

func (l *limited) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := l.b.Wait(r.Context()); err != nil {
		return nil, err
	}
	return l.next.RoundTrip(r)
}
