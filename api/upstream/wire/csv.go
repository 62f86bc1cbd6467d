package wire

import (
	"errors"
	"strings"
)

// Header indexes the columns of a CSV table by name, for connectors that read open-data CSV
// files (DVF, rent tables) whose column order is not promised.
type Header map[string]int

// NewHeader indexes head (a UTF-8 byte-order mark before a name is dropped) and checks that it
// names every column of need: the first one missing is a *MissingColumn of table.
func NewHeader(head []string, table string, need ...string) (Header, error) {
	h := Header{}
	for i, name := range head {
		h[strings.TrimPrefix(name, "\ufeff")] = i
	}
	for _, n := range need {
		if _, ok := h[n]; !ok {
			return nil, &MissingColumn{Table: table, Column: n}
		}
	}
	return h, nil
}

// Get is the trimmed value of column name in rec, or "" when the header lacks it or rec is short.
func (h Header) Get(rec []string, name string) string {
	if i, ok := h[name]; ok && i < len(rec) {
		return strings.TrimSpace(rec[i])
	}
	return ""
}

// MissingColumn is a table whose header lacks a column the parser needs.
type MissingColumn struct{ Table, Column string }

func (e *MissingColumn) Error() string { return e.Table + " header lacks " + e.Column }

// MissingField is the column a *MissingColumn in err names, or "": the field of the connector's
// bad-answer error.
func MissingField(err error) string {
	var mc *MissingColumn
	if errors.As(err, &mc) {
		return mc.Column
	}
	return ""
}
