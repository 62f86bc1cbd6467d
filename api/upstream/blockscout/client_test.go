package blockscout

import (
	"context"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestTokenTransfers(t *testing.T) {
	const addr, token = "0x21e21ba085289f81a86921de890eed30f1ad2375", "0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2"
	q := func(page string) map[string][]string {
		return upstreamtest.Query("module", "account", "action", "tokentx", "address", addr, "contractaddress", token, "sort", "desc", "page", page, "offset", "100")
	}
	s := upstreamtest.New(t)
	s.Expect("/api", q("1"), upstreamtest.File(t, "testdata/tokentx.json"))
	s.Expect("/api", q("2"), upstreamtest.File(t, "testdata/tokentx_none.json"))
	s.Expect("/api", q("3"), upstreamtest.JSON(200, `{"status":"0","message":"Invalid API key","result":null}`))
	s.Expect("/api", q("4"), upstreamtest.ServerError())
	c := New(s.Client(t, Name))
	ctx := context.Background()

	l, err := c.TokenTransfers(ctx, "0x21E21BA085289F81A86921DE890EED30F1AD2375", token, 1, 100)
	if err != nil || len(l) != 1 {
		t.Fatalf("page 1 = %+v, %v", l, err)
	}
	got := l[0]
	if got.Hash != "0xd65b788c610949704a5f9aac2228c7c777434dfe11c863a12306f57fcbd8cdbb" || got.Block != 5997843 || !got.Time.Equal(time.Unix(1532086946, 0)) ||
		got.From != "0x4e83362442b8d1bec281594cea3050c8eb01311c" || got.To != addr || got.Value.String() != "10000000000000000000" ||
		got.Symbol != "MKR" || got.Decimals != 18 || got.Selector != "0xa9059cbb" || got.LogIndex != 0 {
		t.Fatalf("row = %+v", got)
	}
	if l, err := c.TokenTransfers(ctx, addr, token, 2, 100); err != nil || len(l) != 0 {
		t.Fatalf("none = %+v, %v", l, err)
	}
	if _, err := c.TokenTransfers(ctx, addr, token, 3, 100); err == nil {
		t.Fatal("a refusal was taken for an answer")
	}
	if _, err := c.TokenTransfers(ctx, addr, token, 4, 100); upstream.StatusOf(err) != 500 {
		t.Fatalf("server error: %v", err)
	}
}
