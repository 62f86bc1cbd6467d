// Package twilio is the carrier connector of the rented SMS numbers: find an SMS-capable
// local number, buy it (IncomingPhoneNumbers), list the messages sent to it, release it.
// Credentials: the key "AccountSid:AuthToken", or "ApiKeySid:ApiKeySecret@AccountSid", sent as
// HTTP Basic authentication; bodies are form-encoded, answers JSON (paths end in .json).
package twilio

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "twilio"

// Client calls the Twilio REST API 2010-04-01.
type Client struct {
	h                   *httpc.Client
	account, user, pass string
}

// New parses the key; an empty key leaves the client unready (Ready names the setting).
func New(h *httpc.Client, key string) (*Client, error) {
	c := &Client{h: h}
	if key == "" {
		return c, nil
	}
	cred, account, hasAccount := strings.Cut(key, "@")
	user, pass, ok := strings.Cut(cred, ":")
	if !ok || user == "" || pass == "" {
		return nil, fmt.Errorf("twilio: the key must be AccountSid:AuthToken or ApiKeySid:Secret@AccountSid")
	}
	if !hasAccount {
		account = user
	}
	if !strings.HasPrefix(account, "AC") {
		return nil, fmt.Errorf("twilio: the account SID must start with AC")
	}
	c.account, c.user, c.pass = account, user, pass
	return c, nil
}

// Ready is nil once credentials are configured.
func (c *Client) Ready() error {
	if c.account == "" {
		return fmt.Errorf("twilio: %w (set upstream.override.twilio.key to AccountSid:AuthToken)", upstream.ErrNotConfigured)
	}
	return nil
}

// Available is a number offered for purchase.
type Available struct {
	PhoneNumber  string `json:"phone_number"`
	FriendlyName string `json:"friendly_name"`
	Locality     string `json:"locality"`
	Region       string `json:"region"`
	ISOCountry   string `json:"iso_country"`
	Capabilities struct {
		SMS bool `json:"sms"`
	} `json:"capabilities"`
	AddressRequirements string `json:"address_requirements"`
}

// Incoming is a number the account holds.
type Incoming struct {
	SID         string `json:"sid"`
	PhoneNumber string `json:"phone_number"`
	Status      string `json:"status"`
	DateCreated string `json:"date_created"`
}

// Message is one message of the account.
type Message struct {
	SID       string `json:"sid"`
	From      string `json:"from"`
	To        string `json:"to"`
	Body      string `json:"body"`
	Direction string `json:"direction"`
	Status    string `json:"status"`
	DateSent  string `json:"date_sent"`
	NumMedia  string `json:"num_media"`
}

// Sent parses date_sent (RFC 1123 with a numeric zone, as Twilio writes it).
func (m Message) Sent() (time.Time, bool) {
	t, err := time.Parse(time.RFC1123Z, m.DateSent)
	return t, err == nil
}

func (c *Client) send(ctx context.Context, call httpc.Call, out any) error {
	call.BasicUser, call.BasicPass = c.user, c.pass
	r, err := c.h.Send(ctx, call)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return upstream.BadAnswer(Name, call.Method+" "+call.Path, r.Status, httpc.FieldOf(err), err)
	}
	return nil
}

func (c *Client) path(format string, args ...any) string {
	return "/Accounts/" + c.account + fmt.Sprintf(format, args...)
}

// AvailableLocal lists SMS-capable local numbers of country (ISO 3166 alpha-2).
func (c *Client) AvailableLocal(ctx context.Context, country string, n int) ([]Available, error) {
	var a struct {
		Numbers []Available `json:"available_phone_numbers"`
	}
	q := url.Values{"SmsEnabled": {"true"}, "PageSize": {strconv.Itoa(n)}}
	err := c.send(ctx, httpc.Call{Method: http.MethodGet, Path: c.path("/AvailablePhoneNumbers/%s/Local.json", strings.ToUpper(country)), Query: q}, &a)
	return a.Numbers, err
}

// Buy rents number for the account.
func (c *Client) Buy(ctx context.Context, number string) (*Incoming, error) {
	var in Incoming
	form := url.Values{"PhoneNumber": {number}}
	err := c.send(ctx, httpc.Call{Method: http.MethodPost, Path: c.path("/IncomingPhoneNumbers.json"),
		Body: []byte(form.Encode()), ContentType: "application/x-www-form-urlencoded"}, &in)
	if err == nil && in.SID == "" {
		err = upstream.BadAnswer(Name, "POST /IncomingPhoneNumbers.json", 201, "sid", fmt.Errorf("no sid"))
	}
	return &in, err
}

// Release gives the number back; one already gone (404) counts as released.
func (c *Client) Release(ctx context.Context, sid string) error {
	err := c.send(ctx, httpc.Call{Method: http.MethodDelete, Path: c.path("/IncomingPhoneNumbers/%s.json", sid)}, nil)
	if upstream.IsNotFound(err) {
		return nil
	}
	return err
}

// MessagesTo lists the newest messages sent to number (one page of up to n).
func (c *Client) MessagesTo(ctx context.Context, number string, n int) ([]Message, error) {
	var a struct {
		Messages []Message `json:"messages"`
	}
	q := url.Values{"To": {number}, "PageSize": {strconv.Itoa(n)}}
	err := c.send(ctx, httpc.Call{Method: http.MethodGet, Path: c.path("/Messages.json"), Query: q}, &a)
	return a.Messages, err
}
