package httpc

import (
	"fmt"
	"sync"

	"github.com/peage/appliance/api/upstream"
)

// Pool hands out one Client per upstream for the whole process, so every route family that
// calls an upstream shares its rate limit and its breaker: two clients for one upstream
// would each allow the full published rate.
type Pool struct {
	specs map[string]upstream.Spec
	opts  Options

	mu      sync.Mutex
	clients map[string]*Client
}

// NewPool serves the resolved specs (upstream.Resolve) with shared options.
func NewPool(specs map[string]upstream.Spec, o Options) *Pool {
	return &Pool{specs: specs, opts: o, clients: map[string]*Client{}}
}

// Client returns the client of the named upstream, building it on first use.
func (p *Pool) Client(name string) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[name]; ok {
		return c, nil
	}
	spec, ok := p.specs[name]
	if !ok {
		return nil, fmt.Errorf("upstream %s is not in the resolved registry", name)
	}
	c, err := New(spec, p.opts)
	if err != nil {
		return nil, err
	}
	p.clients[name] = c
	return c, nil
}
