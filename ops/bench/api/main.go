// Command api benchmarks the appliance's edge against a bare fasthttp hello-world under the
// same wrk load, side by side in one run: /llms.txt, a 402 challenge, and a 400.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/ops/benchutil"
)

const (
	threads  = 1
	conns    = 32
	duration = 4 * time.Second
	rounds   = 3
)

func best(a, b benchutil.Load) benchutil.Load {
	if b.RPS > a.RPS {
		a.RPS = b.RPS
	}
	if a.P99 == 0 || (b.P99 > 0 && b.P99 < a.P99) {
		a.P99 = b.P99
	}
	return a
}

func main() {
	only := flag.String("only", "", "measure only the rows whose name contains this (e.g. 402): fewer wrk rounds on a shared machine")
	flag.Parse()
	if err := run(*only); err != nil {
		fmt.Fprintln(os.Stderr, "bench api:", err)
		os.Exit(1)
	}
}

func run(only string) error {
	if err := benchutil.Need("wrk", "wrk"); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app, err := benchutil.StartAppliance(ctx)
	if err != nil {
		return err
	}
	defer app.Stop()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	bare := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) { c.SetContentType("text/plain"); c.SetBodyString("hello") }}
	go func() { _ = bare.Serve(ln) }()
	defer bare.Shutdown()

	challenge, err := paidAvailableRoute("http://" + app.API)
	if err != nil {
		return err
	}
	// A second bare server answers, for each path, the very bytes the appliance answers
	// (headers and body, copied once): the ratio against it isolates the edge's own work from
	// the cost of moving a larger answer.
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	recorded := map[string]*fasthttp.Response{}
	// A 402 with signed offers for two schemes carries over 4 KB of headers, fasthttp's default.
	client := &fasthttp.Client{ReadBufferSize: 16 << 10}
	for _, p := range []string{"/llms.txt", challenge, "/v1/fr/tva?siren=123456789"} {
		var resp fasthttp.Response
		req := fasthttp.AcquireRequest()
		req.SetRequestURI("http://" + app.API + p)
		if err := client.Do(req, &resp); err != nil {
			return err
		}
		recorded[p] = &resp
	}
	// The same write buffer as the appliance's (server.WriteBufferSize): with fasthttp's default
	// 4 KB a 402 leaves in two writes, a weaker baseline than the edge it measures.
	same := &fasthttp.Server{WriteBufferSize: server.WriteBufferSize, Handler: func(c *fasthttp.RequestCtx) {
		if r := recorded[string(c.RequestURI())]; r != nil {
			r.CopyTo(&c.Response)
		}
	}}
	go func() { _ = same.Serve(echoLn) }()
	defer same.Shutdown()

	paths := []struct{ name, path string }{
		{"/llms.txt", "/llms.txt"},
		{"402 challenge", challenge},
		{"400 bad param", "/v1/fr/tva?siren=123456789"},
	}
	var rows [][]string
	for _, p := range paths {
		if !strings.Contains(p.name, only) {
			continue
		}
		// The box is a shared VM: alternate the two servers and keep each one's best round.
		var a, b, c benchutil.Load
		for range rounds {
			ra, err := benchutil.Wrk("http://"+app.API+p.path, threads, conns, duration)
			if err != nil {
				return err
			}
			rb, err := benchutil.Wrk("http://"+ln.Addr().String()+p.path, threads, conns, duration)
			if err != nil {
				return err
			}
			rc, err := benchutil.Wrk("http://"+echoLn.Addr().String()+p.path, threads, conns, duration)
			if err != nil {
				return err
			}
			a, b, c = best(a, ra), best(b, rb), best(c, rc)
		}
		rows = append(rows, []string{p.name, fmt.Sprintf("%.0f", a.RPS), fmt.Sprintf("%.0f", b.RPS), fmt.Sprintf("%.2f", a.RPS/b.RPS),
			fmt.Sprintf("%.0f", c.RPS), fmt.Sprintf("%.2f", a.RPS/c.RPS),
			a.P99.String(), b.P99.String(), fmt.Sprintf("%.2f", float64(b.P99)/float64(max(a.P99, 1)))})
	}
	fmt.Printf("API edge vs bare fasthttp (wrk -t%d -c%d -d%s, best of %d alternating rounds, loopback, 2 cores shared with wrk); challenge path: %s\n",
		threads, conns, duration, rounds, challenge)
	// The 402's rate follows its size (the client parses every header byte): a regression in
	// size shows here before it shows in the ratio.
	r := recorded[challenge]
	fmt.Printf("402 answer: %d bytes of headers (PAYMENT-REQUIRED %d), %d bytes of body, %d in all\n",
		len(r.Header.Header()), len(r.Header.Peek("Payment-Required")), len(r.Body()), len(r.Header.Header())+len(r.Body()))
	benchutil.Table([]string{"path", "appliance req/s", "bare hello req/s", "ratio", "bare same-bytes req/s", "ratio",
		"appliance p99", "bare hello p99", "p99 ratio (bare/app)"}, rows)
	return nil
}

// paidAvailableRoute picks a paid route that is available, from the live catalog, with its
// example as the query: its unpaid call is the 402 challenge path.
func paidAvailableRoute(base string) (string, error) {
	resp, err := http.Get(base + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var cat struct {
		Routes []struct {
			Path, Kind string
			Available  bool
			Example    map[string]any
		} `json:"routes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil {
		return "", err
	}
	for _, r := range cat.Routes {
		if r.Kind == "paid" && r.Available {
			q := url.Values{}
			for k, v := range r.Example {
				q.Set(k, fmt.Sprint(v))
			}
			return r.Path + "?" + q.Encode(), nil
		}
	}
	return "", fmt.Errorf("no paid route is available")
}
