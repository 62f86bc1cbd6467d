package chainrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Signature is one function, event or error of an ABI in its canonical form, with the
// selector (functions, errors) or topic (events) Keccak-256 gives it.
type Signature struct {
	Signature       string
	Selector        string // 4 bytes for functions and errors, the 32-byte topic for events
	StateMutability string // functions only
	Anonymous       bool   // events only
}

// Interface is an ABI summarised: what a caller can call, listen to and be refused with.
type Interface struct {
	Functions []Signature
	Events    []Signature
	Errors    []Signature
}

// Summarize reads a JSON ABI entry by entry; entries of no known kind (an empty object, as
// some verifiers emit) are skipped rather than failing the whole interface.
func Summarize(entries []json.RawMessage) (*Interface, error) {
	out := &Interface{}
	for i, e := range entries {
		var kind struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(e, &kind); err != nil {
			return nil, fmt.Errorf("abi[%d]: %w", i, err)
		}
		switch kind.Type {
		case "function", "event", "error":
		default:
			continue // constructor, fallback, receive and empty entries have no signature
		}
		a, err := abi.JSON(bytes.NewReader(append(append([]byte("["), e...), ']')))
		if err != nil {
			return nil, fmt.Errorf("abi[%d]: %w", i, err)
		}
		for _, m := range a.Methods {
			out.Functions = append(out.Functions, Signature{Signature: m.Sig, Selector: hexutil.Encode(m.ID), StateMutability: m.StateMutability})
		}
		for _, ev := range a.Events {
			out.Events = append(out.Events, Signature{Signature: ev.Sig, Selector: ev.ID.Hex(), Anonymous: ev.Anonymous})
		}
		for _, er := range a.Errors {
			out.Errors = append(out.Errors, Signature{Signature: er.Sig, Selector: hexutil.Encode(er.ID[:4])})
		}
	}
	return out, nil
}

// ChainID is the chain the endpoints serve, asked once and remembered: an endpoint list is one
// chain.
func (c *Client) ChainID(ctx context.Context) (uint64, error) {
	if id := c.chainID.Load(); id != 0 {
		return id, nil
	}
	var id hexutil.Uint64
	errs, err := c.batch(ctx, "chain id", []call{{method: "eth_chainId", out: &id}})
	if err != nil {
		return 0, err
	}
	if errs[0] != nil {
		return 0, c.callErr("chain id", errs[0])
	}
	c.chainID.Store(uint64(id))
	return uint64(id), nil
}
