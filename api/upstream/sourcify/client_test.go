package sourcify

import (
	"context"
	"errors"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestContract(t *testing.T) {
	q := upstreamtest.Query("fields", Fields)
	s := upstreamtest.New(t)
	s.Expect("/server/v2/contract/11155111/0xdfebad708f803af22e81044ad228ff77c83c935c", q, upstreamtest.File(t, "testdata/contract_full.json"))
	s.Expect("/server/v2/contract/1/0xdfebad708f803af22e81044ad228ff77c83c935c", q, upstreamtest.File(t, "testdata/contract_proxy.json"))
	s.Expect("/server/v2/contract/8453/0xdfebad708f803af22e81044ad228ff77c83c935c", q, upstreamtest.FileStatus(t, "testdata/not_verified.json", 404))
	s.Expect("/server/v2/contract/10/0xdfebad708f803af22e81044ad228ff77c83c935c", q, upstreamtest.JSON(400,
		`{"customCode":"unsupported_chain","message":"The chain with chainId 10 is not supported","errorId":"1ac6b91a-0605-4459-93dc-18f210a70192"}`)) // derived from the BadRequestResponse example
	s.Expect("/server/v2/contract/137/0xdfebad708f803af22e81044ad228ff77c83c935c", q, upstreamtest.FileStatus(t, "testdata/too_many_requests.json", 429))
	c := New(s.Client(t, Name))
	ctx := context.Background()
	const addr = "0xDFEBAd708F803af22e81044aD228Ff77C83C935c"

	full, err := c.Contract(ctx, 11155111, addr)
	if err != nil || full.Match != "match" || full.Compilation.Name != "MyContract" || full.Compilation.CompilerVersion != "v0.8.12+commit.f00d7308" ||
		len(full.ABI) != 1 || full.Proxy == nil || full.Proxy.IsProxy || full.Proxy.ProxyType != nil {
		t.Fatalf("full = %+v, %v", full, err)
	}
	px, err := c.Contract(ctx, 1, addr)
	if err != nil || px.Match != "exact_match" || !px.Proxy.IsProxy || *px.Proxy.ProxyType != "EIP1967Proxy" ||
		len(px.Proxy.Implementations) != 1 || px.Proxy.Implementations[0].Address != "0x751D7C0Cf91a9b7704541b44E5fF7BeC3D2caA6F" || px.ABI != nil {
		t.Fatalf("proxy = %+v, %v", px, err)
	}
	if _, err := c.Contract(ctx, 8453, addr); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("unverified: %v", err)
	}
	var uc *UnsupportedChainError
	if _, err := c.Contract(ctx, 10, addr); !errors.As(err, &uc) || uc.ChainID != 10 {
		t.Fatalf("unsupported chain: %v", err)
	}
	if _, err := c.Contract(ctx, 137, addr); upstream.StatusOf(err) != 429 {
		t.Fatalf("rate limited: %v", err)
	}
}
