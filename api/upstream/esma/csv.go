package esma

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Table is one register file read into rows keyed by column name.
type Table struct {
	Columns []string
	Rows    []map[string]string
}

// ParseCSV reads one of ESMA's register files with its known quirks: an optional UTF-8 byte
// order mark, CRLF line ends, quoted fields spanning several lines, a trailing empty column,
// rows shorter or longer than the header, and stray Windows-1252 bytes inside otherwise UTF-8
// text (they are decoded as Windows-1252). The separator is the comma ESMA uses, or the
// semicolon when the header line has more of them (a spreadsheet re-export).
func ParseCSV(b []byte) (*Table, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(b) {
		b = repairUTF8(b)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	head, _, _ := bytes.Cut(b, []byte("\n"))
	if bytes.Count(head, []byte(";")) > bytes.Count(head, []byte(",")) {
		r.Comma = ';'
	}
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = strings.TrimSpace(h)
	}
	if !slices.Contains(cols, "ae_lei_name") {
		return nil, errors.New("header lacks ae_lei_name: not a MiCA register file")
	}
	t := &Table{Columns: cols}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		row := make(map[string]string, len(cols))
		empty := true
		for i, v := range rec {
			if i >= len(cols) || cols[i] == "" {
				continue
			}
			v = strings.TrimSpace(v)
			row[cols[i]] = v
			if v != "" {
				empty = false
			}
		}
		if !empty {
			t.Rows = append(t.Rows, row)
		}
	}
	return t, nil
}

// cp1252 maps the bytes 0x80-0x9F of Windows-1252 that differ from Latin-1; 0 where undefined.
var cp1252 = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

// repairUTF8 keeps every valid UTF-8 sequence and decodes each invalid byte as Windows-1252,
// the encoding of the fragments pasted into ESMA's otherwise UTF-8 files.
func repairUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			c := b[0]
			switch {
			case c >= 0x80 && c < 0xA0 && cp1252[c-0x80] != 0:
				r = cp1252[c-0x80]
			default:
				r = rune(c) // Latin-1 agrees with Windows-1252 from 0xA0
			}
			out = utf8.AppendRune(out, r)
			b = b[1:]
			continue
		}
		out = append(out, b[:n]...)
		b = b[n:]
	}
	return out
}
