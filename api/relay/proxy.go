package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/proxyhop"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/proxyd/client"
)

// Proxy packages across the fleet. A sale is a call to one box picked by the buyer's
// constraints (its announced exit: country, ASN): the box's proxyd checks its exit live and
// issues the key, as it does on a single box, and the gateway records which box holds the
// package. Buyers then connect to the gateway's proxy port (proxyhop), which carries their
// tunnel through the fleet's WireGuard tunnel to that box's proxyd, where the bytes are metered
// and the egress guarded. The package's usage and revocation are asked of its box alone.

// proxyCall is a proxy route's request on the wire.
type proxyCall struct {
	GB  int    `json:"gb,omitempty"`
	Key string `json:"key,omitempty"`
}

// proxyAnswer is its answer: one of the results, or proxyd's typed error (so the gateway tells
// an exit that is down from an unknown key as a single box would).
type proxyAnswer struct {
	Sale   *client.Sale   `json:"sale,omitempty"`
	Usage  *client.Usage  `json:"usage,omitempty"`
	Status *client.Status `json:"status,omitempty"`
	Error  *client.Error  `json:"error,omitempty"`
}

// BoxProxyRoutes are the fleet routes of a box whose proxyd is svc: what a gateway's sales,
// usage checks and revocations call.
func BoxProxyRoutes(svc client.Service) map[string]box.Handler {
	answer := func(a proxyAnswer, err error) ([]byte, error) {
		var ce *client.Error
		if errors.As(err, &ce) {
			a = proxyAnswer{Error: ce}
		} else if err != nil {
			return nil, err // proxyd does not answer: the call fails on this box
		}
		return json.Marshal(a)
	}
	call := func(data []byte) (proxyCall, error) {
		var c proxyCall
		err := json.Unmarshal(data, &c)
		return c, err
	}
	return map[string]box.Handler{
		fleet.RouteProxySell: func(ctx context.Context, data []byte) ([]byte, error) {
			c, err := call(data)
			if err != nil {
				return nil, err
			}
			s, err := svc.Sell(ctx, c.GB)
			return answer(proxyAnswer{Sale: s}, err)
		},
		fleet.RouteProxyRevoke: func(ctx context.Context, data []byte) ([]byte, error) {
			c, err := call(data)
			if err != nil {
				return nil, err
			}
			return answer(proxyAnswer{}, svc.Revoke(ctx, c.Key))
		},
		fleet.RouteProxyUsage: func(ctx context.Context, data []byte) ([]byte, error) {
			c, err := call(data)
			if err != nil {
				return nil, err
			}
			u, err := svc.Usage(ctx, c.Key)
			return answer(proxyAnswer{Usage: u}, err)
		},
		fleet.RouteProxyStatus: func(ctx context.Context, _ []byte) ([]byte, error) {
			st, err := svc.Status(ctx)
			return answer(proxyAnswer{Status: st}, err)
		},
	}
}

// ProxyService is the gateway's proxyd: a client.Service whose packages live on the boxes.
type ProxyService struct {
	d        *dispatch.Dispatcher
	packages *registry.Packages
	boxOf    boxCache
	tunnelOf func(box string) (netip.Addr, bool)
	host     string
	port     int
}

// NewProxyService sells through d, records the packages' boxes in packages, finds a box's
// tunnel address with tunnelOf, and names host:port (the gateway's proxy port) in every sale.
func NewProxyService(d *dispatch.Dispatcher, packages *registry.Packages, tunnelOf func(string) (netip.Addr, bool), host string, port int) *ProxyService {
	return &ProxyService{d: d, packages: packages, tunnelOf: tunnelOf, host: host, port: port}
}

// Sell sells a package on any box with a proxy.
func (p *ProxyService) Sell(ctx context.Context, gb int) (*client.Sale, error) {
	return p.SellWhere(ctx, gb, "", 0)
}

// SellWhere sells a package on a box whose exit is in country and ASN (zero values: any): the
// pick is by the boxes' announced exits, and the exit the box's live check found must agree,
// else the key is revoked at once and nothing is sold.
func (p *ProxyService) SellWhere(ctx context.Context, gb int, country string, asn uint32) (*client.Sale, error) {
	body, _ := json.Marshal(proxyCall{GB: gb})
	raw, boxName, err := p.d.Do(ctx, fleet.RouteProxySell, registry.Constraints{Country: strings.ToUpper(country), ASN: asn},
		dispatch.Request{Body: body})
	if errors.Is(err, dispatch.ErrNoBox) {
		return nil, &client.Error{Code: client.CodeNoExit, Message: "no box of the fleet sells proxy packages with an exit in " + where(country, asn)}
	}
	if err != nil {
		return nil, fleetProxyError(err)
	}
	a, err := readProxyAnswer(raw)
	if err != nil {
		return nil, err
	}
	if a.Sale == nil {
		return nil, &client.Error{Code: client.CodeInternal, Message: "the box answered the sale without a package"}
	}
	s := a.Sale
	if !liveExitIs(s.Exit, country, asn) {
		_ = p.revokeOn(context.WithoutCancel(ctx), boxName, s.Key)
		return nil, &client.Error{Code: client.CodeNoExit, Message: fmt.Sprintf("box %s announced an exit in %s but its live check found %s %s",
			boxName, where(country, asn), s.Exit.Country, s.Exit.ASN)}
	}
	if err := p.packages.Put(ctx, proxyhop.KeyHash(s.Key), boxName); err != nil {
		_ = p.revokeOn(context.WithoutCancel(ctx), boxName, s.Key)
		return nil, &client.Error{Code: client.CodeUnavailable, Message: "the fleet could not record the package: " + err.Error()}
	}
	s.ProxyHost, s.ProxyPort, s.Box = p.host, p.port, boxName
	return s, nil
}

// liveExitIs says whether the exit a box's live check found is in the country and ASN asked.
func liveExitIs(e client.Exit, country string, asn uint32) bool {
	return (country == "" || strings.EqualFold(e.Country, country)) &&
		(asn == 0 || strings.EqualFold(strings.TrimPrefix(strings.ToUpper(e.ASN), "AS"), strconv.FormatUint(uint64(asn), 10)))
}

func where(country string, asn uint32) string {
	var parts []string
	if country != "" {
		parts = append(parts, strings.ToUpper(country))
	}
	if asn != 0 {
		parts = append(parts, "AS"+strconv.FormatUint(uint64(asn), 10))
	}
	if len(parts) == 0 {
		return "any country"
	}
	return strings.Join(parts, " ")
}

// Revoke ends a package on its box.
func (p *ProxyService) Revoke(ctx context.Context, key string) error {
	boxName, err := p.packages.Box(ctx, proxyhop.KeyHash(key))
	if errors.Is(err, registry.ErrNoPackage) {
		return nil // as proxyd: revoking an unknown key is not an error
	}
	if err != nil {
		return err
	}
	return p.revokeOn(ctx, boxName, key)
}

func (p *ProxyService) revokeOn(ctx context.Context, boxName, key string) error {
	_, err := p.askOn(ctx, boxName, fleet.RouteProxyRevoke, key)
	return err
}

// askOn calls route about the package of key on boxName, the box that holds it.
func (p *ProxyService) askOn(ctx context.Context, boxName, route, key string) (proxyAnswer, error) {
	body, _ := json.Marshal(proxyCall{Key: key})
	raw, err := p.d.DoOn(ctx, boxName, route, dispatch.Request{Body: body, NoSideEffects: true})
	if err != nil {
		return proxyAnswer{}, fleetProxyError(err)
	}
	return readProxyAnswer(raw)
}

// Usage asks the package's box for its meter.
func (p *ProxyService) Usage(ctx context.Context, key string) (*client.Usage, error) {
	boxName, err := p.packages.Box(ctx, proxyhop.KeyHash(key))
	if errors.Is(err, registry.ErrNoPackage) {
		return nil, &client.Error{Code: client.CodeUnknownKey, Message: "no package has this key"}
	}
	if err != nil {
		return nil, err
	}
	a, err := p.askOn(ctx, boxName, fleet.RouteProxyUsage, key)
	if err != nil {
		return nil, err
	}
	if a.Usage == nil {
		return nil, &client.Error{Code: client.CodeInternal, Message: "the box answered without a meter"}
	}
	return a.Usage, nil
}

// Status is a box's exit status as buyers see it through the gateway: the gateway's proxy
// port, and reachability unknown (the box needs no inbound port: buyers reach the gateway).
func (p *ProxyService) Status(ctx context.Context) (*client.Status, error) {
	raw, _, err := p.d.Do(ctx, fleet.RouteProxyStatus, registry.Constraints{}, dispatch.Request{NoSideEffects: true})
	if err != nil {
		return nil, fleetProxyError(err)
	}
	a, err := readProxyAnswer(raw)
	if err != nil {
		return nil, err
	}
	if a.Status == nil {
		return nil, &client.Error{Code: client.CodeInternal, Message: "the box answered without a status"}
	}
	st := a.Status
	st.ProxyHost, st.ProxyPort = p.host, p.port
	st.Reachable, st.ReachableNote = client.Unknown, "buyers connect to the fleet gateway's proxy port; the box's proxy is reached through the fleet's WireGuard tunnel"
	return st, nil
}

// Locate finds where the gateway's proxy port carries a tunnel of the package of keyHash: its
// box's proxy, inside the tunnel network.
func (p *ProxyService) Locate(ctx context.Context, keyHash string) (netip.AddrPort, error) {
	var boxName string
	if name, ok := p.boxOf.get(keyHash); ok {
		boxName = name
	} else {
		var err error
		boxName, err = p.packages.Box(ctx, keyHash)
		if errors.Is(err, registry.ErrNoPackage) {
			return netip.AddrPort{}, proxyhop.ErrUnknownKey
		}
		if err != nil {
			return netip.AddrPort{}, err
		}
		p.boxOf.put(keyHash, boxName)
	}
	a, ok := p.tunnelOf(boxName)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("relay: box %s has no tunnel address (revoked, or enrolled without one)", boxName)
	}
	return netip.AddrPortFrom(a, fleet.ProxyPort), nil
}

// boxCache caches the packages' boxes (a package never moves), so that a tunnel's set-up
// after the first of its key costs no round trip to JetStream. Only sold packages enter it,
// each once, but they are sold for as long as the gateway runs: past boxCacheMax entries it
// starts over (JetStream stays the record; a miss costs one round trip).
type boxCache struct {
	m   sync.Map
	n   atomic.Int64
	max int64 // boxCacheMax when zero
}

const boxCacheMax = 100_000

func (c *boxCache) get(keyHash string) (string, bool) {
	v, ok := c.m.Load(keyHash)
	if !ok {
		return "", false
	}
	return v.(string), true
}

func (c *boxCache) put(keyHash, box string) {
	if _, loaded := c.m.LoadOrStore(keyHash, box); loaded {
		return
	}
	limit := c.max
	if limit == 0 {
		limit = boxCacheMax
	}
	if c.n.Add(1) > limit {
		c.m.Clear()
		c.n.Store(0)
		c.m.Store(keyHash, box)
		c.n.Add(1)
	}
}

func readProxyAnswer(raw []byte) (proxyAnswer, error) {
	var a proxyAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, &client.Error{Code: client.CodeInternal, Message: "the box's proxy answer is unreadable: " + err.Error()}
	}
	if a.Error != nil {
		return a, a.Error
	}
	return a, nil
}

// fleetProxyError says, as proxyd's typed error, that the package's box (or any box, for the
// status) failed, went away or is not in the fleet now.
func fleetProxyError(err error) error {
	return &client.Error{Code: client.CodeUnavailable, Message: err.Error()}
}
