package server_test

import (
	"net"
	"net/url"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/paywall"
)

// BenchmarkChallenge is the 402 path the Bazaar's crawlers and every client's first call take:
// an unpaid call with valid parameters to a paid route, through the verifying gate, with signed
// offers, as appliance dev answers it. Run with -benchmem: its allocs/op are the edge's own
// work (the client's fasthttp request and response are reused), which ops/bench/api measures
// against a bare fasthttp under wrk.
func BenchmarkChallenge(b *testing.B) {
	cat := boundCatalog(b)
	e := cat.ByPath("/v1/extract")
	q := url.Values{}
	for k, v := range e.Example {
		q.Set(k, v.(string))
	}
	keys := apitest.ReceiptKeys(b, publicBase)
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	ln := fasthttputil.NewInmemoryListener()
	gate := paywall.New(pay, paywall.DefaultPolicy(), nil, paywall.GateOptions{Receipts: keys})
	apitest.Start(b, cat, apitest.Options{Gate: gate, Pay: pay, Receipts: keys, Listener: ln})
	client := &fasthttp.HostClient{Addr: "box", ReadBufferSize: 16 << 10,
		Dial: func(string) (net.Conn, error) {
			return ln.DialWithLocalAddr(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1})
		}}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI("http://box" + e.Path + "?" + q.Encode())
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Do(req, resp); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode() != fasthttp.StatusPaymentRequired {
			b.Fatalf("%d %s", resp.StatusCode(), resp.Body())
		}
	}
}
