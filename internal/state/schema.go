package state

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// The one schema of the appliance's live state. Every table, every row type and every index is
// declared in this file and nowhere else. Rows are stored as pointers and are immutable once
// inserted: a change inserts a modified copy (go-memdb is copy-on-write). Accessors hand out
// values, never the stored pointers and never a *memdb.Txn.
//
// Each daemon opens its own Store (its own journal file) with this same schema and uses the
// tables it owns: api uses inbox, event, page, freecall and result; proxyd uses package.

const (
	tInbox    = "inbox"
	tEvent    = "event"
	tPage     = "page"
	tPackage  = "package"
	tFreeCall = "freecall"
	tResult   = "result"
	tSMS      = "smsnumber"
)

// Inbox is a paid webhook inbox (POST /v1/callbacks).
type Inbox struct {
	ID        string    `json:"id"`  // public id, 32 hex characters
	Key       string    `json:"key"` // secret that authorises reading events
	Label     string    `json:"label,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Events    int       `json:"events"`   // events stored so far (at most InboxMaxEvents)
	LastSeq   uint64    `json:"last_seq"` // seq of the newest event; events are numbered 1, 2, 3...
	Bytes     int64     `json:"bytes"`    // body bytes stored
	// Used is what the stored events take from the inbox's quota (Event.size summed). Rows
	// of a journal from before the quota lack it, and start at 0 with their 100-event bound.
	Used int64 `json:"used,omitempty"`
}

// Expired reports whether the inbox has reached its end of life at now.
func (i Inbox) Expired(now time.Time) bool { return !now.Before(i.ExpiresAt) }

// Event is one captured request delivered to an inbox's callback_url.
type Event struct {
	Inbox       string              `json:"inbox"`
	Seq         uint64              `json:"seq"` // 1-based, dense, assigned at delivery
	ReceivedAt  time.Time           `json:"received_at"`
	Method      string              `json:"method"`
	Query       [][2]string         `json:"query,omitempty"` // raw pairs in order
	Header      map[string][]string `json:"header,omitempty"`
	ContentType string              `json:"content_type,omitempty"`
	Kind        string              `json:"kind"` // body kind: "json", "form", "text", "binary" or "empty"
	// Body is filled by AddEvent's caller and by Events; the stored row and the journal never
	// hold it (see bodystore). A record from before bodies moved to disk carries it inline and
	// is moved at replay.
	Body []byte `json:"body,omitempty"`
	// BodyBytes, BodySHA256 and BodyFile name the body on disk (no file for an empty body).
	BodyBytes  int64  `json:"body_bytes,omitempty"`
	BodySHA256 string `json:"body_sha256,omitempty"`
	BodyFile   string `json:"body_file,omitempty"`
}

// Result is an answer kept under a caller's idempotency key (a route's requestKey), so a retry
// gets the same answer rather than a new one computed from data that moved since.
type Result struct {
	Key       string    `json:"key"` // route ID, the request's identity and the caller's key
	Body      []byte    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Page is a published HTML page (POST /v1/publish). HTML is already sanitised.
type Page struct {
	ID        string    `json:"id"` // 32 hex characters (128 bits from crypto/rand)
	Title     string    `json:"title"`
	HTML      string    `json:"html,omitempty"` // emptied when the page expires
	Bytes     int       `json:"bytes"`          // size of the stored HTML
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Expired reports whether the page has reached its end of life at now.
func (p Page) Expired(now time.Time) bool { return !now.Before(p.ExpiresAt) }

// Package is a sold proxy package and its meter (see proxy.go).
type Package struct {
	Key        string    `json:"key"` // the buyer's <PROXY_KEY>
	GB         int       `json:"gb"`
	BytesTotal int64     `json:"bytes_total"` // quota in bytes
	BytesUsed  int64     `json:"bytes_used"`  // meter: bytes relayed so far (both directions)
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Revoked    bool      `json:"revoked,omitempty"`
	Payer      string    `json:"payer,omitempty"`   // payer address, for the operator
	Payment    string    `json:"payment,omitempty"` // settlement reference (tx hash or nonce)
	UpdatedAt  time.Time `json:"updated_at"`        // last meter update
}

// FreeCall records that a client used its free call of a UTC day on a route family.
type FreeCall struct {
	Client string    `json:"client"` // payer address or client IP, as the caller chooses
	Day    string    `json:"day"`    // UTC day, YYYY-MM-DD
	Family string    `json:"family"` // route family, e.g. "chain", "llm"
	Route  string    `json:"route,omitempty"`
	At     time.Time `json:"at"`
}

// SMSNumber is a phone number rented from the carrier for one session (GET /v1/sms/number).
// The row exists before the number is handed out and outlives it: a number whose ExpiresAt
// has passed and that is not Released is released by the reaper, at start and periodically,
// so a restart never leaks a rented number.
type SMSNumber struct {
	Session    string    `json:"session"` // public session id, 32 hex characters
	Provider   string    `json:"provider"`
	NumberSID  string    `json:"number_sid"` // the carrier's id of the rented number (Twilio PN…)
	Number     string    `json:"number"`     // E.164
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Released   bool      `json:"released,omitempty"`
	ReleasedAt time.Time `json:"released_at,omitempty"`
}

// Expired reports whether the session has ended at now.
func (n SMSNumber) Expired(now time.Time) bool { return !now.Before(n.ExpiresAt) }

func schema() *memdb.DBSchema {
	str := func(field string) memdb.Indexer { return &memdb.StringFieldIndex{Field: field} }
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		tInbox: {Name: tInbox, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: str("ID")},
		}},
		tEvent: {Name: tEvent, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				str("Inbox"), &memdb.UintFieldIndex{Field: "Seq"},
			}}},
		}},
		tPage: {Name: tPage, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: str("ID")},
		}},
		tPackage: {Name: tPackage, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: str("Key")},
		}},
		tResult: {Name: tResult, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: str("Key")},
		}},
		tSMS: {Name: tSMS, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: str("Session")},
		}},
		tFreeCall: {Name: tFreeCall, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				str("Client"), str("Day"), str("Family"),
			}}},
		}},
	}}
}

// record is one journaled operation. Exactly one payload field is set, matching Op.
// Records are JSON so a journal can be read by eye in an emergency.
type record struct {
	Op      string     `json:"op"`
	Inbox   *Inbox     `json:"inbox,omitempty"`
	Event   *Event     `json:"event,omitempty"`
	Page    *Page      `json:"page,omitempty"`
	Package *Package   `json:"package,omitempty"`
	Usage   *usage     `json:"usage,omitempty"`
	Usages  []usage    `json:"usages,omitempty"`
	Free    *FreeCall  `json:"free,omitempty"`
	Result  *Result    `json:"result,omitempty"`
	SMS     *SMSNumber `json:"sms,omitempty"`
}

// usage sets a package's meter to an absolute value (idempotent, unlike a delta).
type usage struct {
	Key  string    `json:"key"`
	Used int64     `json:"used"`
	At   time.Time `json:"at"`
}

const (
	opInbox   = "inbox.put"
	opEvent   = "event.put"
	opPage    = "page.put"
	opPackage = "package.put"
	opUsage   = "package.usage"
	opUsages  = "package.usages"
	opFree    = "free.put"
	opFreeDel = "free.del"
	opResult  = "result.put"
	opSMS     = "sms.put"
)
