// Package proxyd is the appliance's metered residential proxy: a CONNECT-only HTTP proxy, the
// per-key byte meters, and the admin API (Unix socket) through which the api daemon sells
// packages.
//
// # Requests
//
// Each accepted connection is read by its own goroutine (connect.go): the request head, at
// most 16 KiB (more → 431) within Config.HeaderTimeout, is parsed for its request line and
// its Proxy-Authorization field only; no general HTTP server stands in between, which makes
// a tunnel's set-up one goroutine and a pooled buffer instead of net/http's connection,
// request, header map, buffers and hand-over goroutines. A malformed head gets 400, any method
// but CONNECT 405 with a one-line explanation, and every answer but the 200 closes the
// connection. A CONNECT is then checked in order: Proxy-Authorization (Basic, user "buyer",
// the password is the key; missing or unknown → 407 with Proxy-Authenticate; too many wrong
// keys from one client, an IPv4 address or an IPv6 /64 → 429), the package (revoked, expired
// or spent → 403, not 407, so clients do not prompt for other credentials), the target syntax
// (strict host:port), the port allow-list (443 and 80 by default; 25 never), the global
// tunnel cap (503), and the egress policy (internal/egress: the name is resolved once, every
// answer is checked, and the checked address is the one dialled). The same goroutine then
// dials, registers the tunnel under its key (per-key cap → 429), answers 200 and carries the
// downstream copy. HTTP_PROXY and HTTPS_PROXY play no part. Bytes a client sends after its
// CONNECT head without waiting for the 200 are kept and passed on (metered) first.
//
// # Copying and the kernel path
//
// On the buffered copy path each direction reads inside the netpoller's callback: a read
// that finds nothing parks the goroutine holding no buffer, pipe or grant, so an idle tunnel
// costs its two goroutines and two sockets. Bytes that are there are read into a pooled 32 KiB
// buffer (128 KiB for the rest of a burst, once a read filled it and as much again waits),
// granted by the meter, written and settled in the same callback with raw system calls
// (relay_linux.go), and the callback parks again at once when the kernel says (TCP_INQ) the read
// left nothing, a FIN included. On the splice path each direction waits for readability with a
// one-byte MSG_PEEK, then takes a whole window (Config.SpliceWindowBytes, 256 KiB) and moves it
// with io.CopyN between the two *net.TCPConn, which Linux does with splice (zero copy), or,
// near the end of the quota or of the meter's durable slack, or when many tunnels share the
// slack, copies exactly what is there as the buffered path does. Which copy path runs is
// measured at start (Config.CopyPath "auto", copypath.go): both move the same spans between
// loopback sockets on one thread, timed by its CPU clock, and the cheaper is kept;
// Stats says which and why. A half-close is passed on with CloseWrite; an error, the quota, a
// revocation, an expiry or the idle sweep closes both sides at once.
//
// The daemon runs its Go code on one processor, as squid runs on one thread, wherever the
// meters' fsyncs go through AIO and so never hold it (sched.go, TuneScheduler; Stats.Procs).
//
// # What the meter counts
//
// Tunnel payload, both directions, byte for byte as the proxy hands it to the kernel: what the
// buyer sends to the target and what the target sends back, TLS handshakes and records
// included (they are payload to a CONNECT proxy). Not counted: the CONNECT request and the
// proxy's reply, refused tunnels, and bytes a target sent that the proxy never forwarded.
// One sold GB is 1 GiB (1,073,741,824 bytes). A package ends 30 days after its sale or when
// its bytes are spent, whichever comes first; the tunnel carrying the last byte is cut at
// exactly that byte, and every other tunnel of the key is closed.
//
// # Meters and kill -9
//
// A meter holds used (granted, including writes in flight), delivered (written) and durable
// (what the store has). A byte is granted before it is written, so the quota is never
// exceeded; the grant is returned for whatever the write did not take. A meter asks to be
// written once it runs close to the slack ahead (Config.MeterSlackBytes, 4 MiB), leaving room
// for what passes during a write (twice what passed during the last one, between slack/8 and
// slack/2: at 1 Gbit/s a write every 3.5 MiB or so, see meter.go), and the sweeper
// writes every moved meter each SweepInterval; one writer takes every meter that asked while
// the previous write was under way into one store write (one journal record, one fsync), so
// many tunnels' meters cost what one costs. A grant that would put used more than slack ahead
// of durable waits for the write. Hence at every instant
//
//	durable ≤ delivered ≤ used ≤ durable + slack
//
// and after kill -9 (or a power cut: the store fsyncs every write) the recovered meter is
// never above what really passed and at most slack (4 MiB) below it: a crash can only give
// the buyer up to 4 MiB, never take any. Package creation and revocation are fsynced before
// the sale answers.
//
// # Selling
//
// Sell checks the exit live before issuing: it fetches the configured IP-echo endpoints
// through this very proxy (its listener, an internal probe key that is never stored or
// metered, the egress policy and the dialer), compares country and ASN with the configured
// expectations, optionally measures a download (Config.SpeedURL), and only then creates the
// package. Keys are 160 bits from crypto/rand; only their SHA-256 is stored.
package proxyd
