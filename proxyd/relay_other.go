//go:build !linux

package proxyd

// canRelay says whether relay (raw system calls on the sockets) is available here.
const canRelay = false

func (p *pump) relay(bool) error { return p.copyChunk() }

type relayState struct{}

func (p *pump) write(b []byte) (int, error) { return p.dst.Write(b) }
