// Package fleet is the wire contract shared by the hub, the boxes, the registry and the
// dispatcher of a fleet: subject names, the heartbeat record, the reply headers and the
// credentials a box receives at enrolment. It holds no connection and starts nothing, so the
// gateway side and the box side agree by importing the same constants.
package fleet

import (
	"errors"
	"fmt"
	"time"
)

// Subjects. A route's work reaches one box by its own subject (the gateway picks the box), or
// any box serving the route through the route's queue group (NATS balances). Heartbeats carry
// the box's name as their last token, which the box's permissions pin to its own name.
const (
	routePrefix     = "peage.route."
	boxPrefix       = "peage.box."
	heartbeatPrefix = "peage.fleet.hb."

	// RouteSubjects and HeartbeatSubjects are the wildcards the hub grants and listens on.
	RouteSubjects     = routePrefix + ">"
	HeartbeatSubjects = heartbeatPrefix + "*"

	// ServiceName is the nats.go micro service every box registers; $SRV.PING.peage-box
	// lists the boxes that are up.
	ServiceName = "peage-box"
)

// RouteSubject is the subject every box serving route listens on, in RouteQueue.
func RouteSubject(route string) string { return routePrefix + route }

// RouteQueue is the queue group of a route, so that each call reaches one box of the group.
func RouteQueue(route string) string { return "route-" + route }

// BoxSubject is the subject one box serves route on.
func BoxSubject(box, route string) string { return boxPrefix + box + "." + route }

// BoxSubjects is every subject addressed to one box.
func BoxSubjects(box string) string { return boxPrefix + box + ".>" }

// HeartbeatSubject is the subject a box announces itself on.
func HeartbeatSubject(box string) string { return heartbeatPrefix + box }

// HeartbeatAckSubject is where the registry acknowledges one box's heartbeat once it has
// written it: the reply subject the box sends its heartbeats with, which tells the box that
// the gateway hears it (a publish alone is never acknowledged). '$' is in no route name, and
// the box already receives its own subjects.
func HeartbeatAckSubject(box string) string { return boxPrefix + box + ".$hb" }

// BoxOfHeartbeat returns the box name a heartbeat subject names, or "" for another subject.
func BoxOfHeartbeat(subject string) string {
	if len(subject) <= len(heartbeatPrefix) || subject[:len(heartbeatPrefix)] != heartbeatPrefix {
		return ""
	}
	name := subject[len(heartbeatPrefix):]
	if ValidName(name) != nil {
		return ""
	}
	return name
}

// ValidName accepts the names of boxes and routes: one subject token of lower-case letters,
// digits, '-' and '_' (a '.', '*' or '>' would let a name reach other subjects).
func ValidName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("name %q: 1 to 64 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("name %q: only a-z, 0-9, '-' and '_'", name)
		}
	}
	return nil
}

// Exit is where a box's traffic leaves for the Internet.
type Exit struct {
	Country string `json:"country,omitempty"` // ISO 3166-1 alpha-2, upper case
	ASN     uint32 `json:"asn,omitempty"`
}

// Health of a box as it reports it.
const (
	HealthOK      = "ok"
	HealthLeaving = "leaving" // a box closing on purpose: the registry drops it at once
)

// Record is what a box says of itself in each heartbeat, and what the registry keeps.
type Record struct {
	Box    string   `json:"box"`
	Routes []string `json:"routes"`
	// Withheld are routes the box has the means for but does not serve: their answers depend
	// on the exit, and its exit is not known or not in their country.
	Withheld []string `json:"withheld,omitempty"`
	Exit     Exit     `json:"exit"`
	Health   string   `json:"health"`
	// Load is the calls the box holds (running or waiting for a slot); Slots how many it runs
	// at once.
	Load  int `json:"load"`
	Slots int `json:"slots"`
	// ProgressEveryMS is how often the box signs of life on a call it holds, so the
	// dispatcher knows how long a silence means the box is gone.
	ProgressEveryMS int64 `json:"progress_every_ms"`
	// CAPins are the fleet CAs the box trusts (CAPins of its bundle), so that the hub knows
	// when every box trusts a CA it is about to switch to.
	CAPins []string `json:"ca_pins,omitempty"`
}

// ProgressEvery is the record's progress interval as a duration.
func (r Record) ProgressEvery() time.Duration {
	return time.Duration(r.ProgressEveryMS) * time.Millisecond
}

// Serves reports whether the box announced route.
func (r Record) Serves(route string) bool {
	for _, have := range r.Routes {
		if have == route {
			return true
		}
	}
	return false
}

// Reply headers. Every message a box sends on a call's reply subject carries HeaderStatus.
const (
	HeaderStatus = "Peage-Status"
	// StatusProgress: the box holds the call and is alive; more follows.
	StatusProgress = "progress"
	// StatusOK: the answer (or its first chunk when HeaderChunks > 1).
	StatusOK = "ok"
	// StatusError: the route failed on the box; HeaderError says why.
	StatusError = "error"
	// StatusChunk: a further chunk of an answer, HeaderChunk its index from 1.
	StatusChunk = "chunk"

	HeaderError  = "Peage-Error"
	HeaderChunks = "Peage-Chunks"
	HeaderChunk  = "Peage-Chunk"
	HeaderLength = "Peage-Length"
	// HeaderDeadline is the call's deadline in Unix milliseconds, so that the box stops
	// working for a caller that has gone.
	HeaderDeadline = "Peage-Deadline"
)

// ChunkSize is the payload of one reply message: half of NATS's default 1 MB max_payload,
// leaving room for headers.
const ChunkSize = 512 << 10

// Credentials are what a box receives at enrolment: its name, the nkey seed it signs the
// leaf connection with, where the hub's leaf listener is and the CA that signed its
// certificate. The seed is shown once; the hub keeps only the public key.
type Credentials struct {
	Box     string `json:"box"`
	Seed    string `json:"seed"`
	LeafURL string `json:"leaf_url"`
	CAPEM   string `json:"ca_pem"`
	// WireGuard is the box's end of the fleet's proxy tunnel, when the gateway carries proxy
	// packages. Its private key, like the seed, is the box's own: a token's answer carries
	// none (the box adds the key it made), Hub.Enrol's (dev, tests) the one it made.
	WireGuard *WireGuard `json:"wireguard,omitempty"`
}

// WireGuard is the peer enrolment hands a box: its own key and tunnel address, and the gateway
// it dials out to (keys in base64, as wg(8) and systemd-networkd write them).
type WireGuard struct {
	// PrivateKey is absent from a token's answer: the box made it and adds it.
	PrivateKey string `json:"private_key,omitempty"`
	// Address is the box's address in the tunnel network, GatewayAddress the gateway's.
	Address        string `json:"address"`
	GatewayAddress string `json:"gateway_address"`
	GatewayKey     string `json:"gateway_public_key"`
	// Endpoint is the gateway's UDP host:port.
	Endpoint string `json:"endpoint"`
	// KeepaliveSeconds keeps a carrier-grade NAT's mapping open (25).
	KeepaliveSeconds int `json:"keepalive_seconds"`
}

// ProxyPort is where a box's proxy answers inside the tunnel network (its tunnel address only).
const ProxyPort = 3128

// The routes a box with a proxy serves to the gateway's proxy sales: the sale (with its live
// exit check), and a package's revocation and usage, asked of the box that holds it.
const (
	RouteProxySell   = "proxy_sell"
	RouteProxyRevoke = "proxy_revoke"
	RouteProxyUsage  = "proxy_usage"
	RouteProxyStatus = "proxy_status"
)

// Validate checks that the credentials are complete.
func (c Credentials) Validate() error {
	if err := ValidName(c.Box); err != nil {
		return fmt.Errorf("credentials: box %w", err)
	}
	if c.Seed == "" || c.LeafURL == "" || c.CAPEM == "" {
		return errors.New("credentials: seed, leaf_url and ca_pem are required")
	}
	return nil
}
