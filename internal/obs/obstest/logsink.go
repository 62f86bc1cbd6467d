// Package obstest holds what tests of log output share.
package obstest

import (
	"bytes"
	"sync"
)

// LogSink is a log writer the server's goroutines write to while the test reads it
// (give it to slog.NewJSONHandler).
type LogSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *LogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// Bytes is a copy of what was written so far: the writers may go on while the test reads it.
func (s *LogSink) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

func (s *LogSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
