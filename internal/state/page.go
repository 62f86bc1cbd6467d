package state

import (
	memdb "github.com/hashicorp/go-memdb"
)

// PutPage stores a new published page (its HTML already sanitised). ErrExists if the id is
// taken. Bytes is set to len(HTML).
func (s *Store) PutPage(p Page) error {
	return s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tPage, "id", p.ID); raw != nil {
			return nil, ErrExists
		}
		p.Bytes = len(p.HTML)
		return &record{Op: opPage, Page: &p}, nil
	})
}

// Page returns the page with id. An expired page is returned (with HTML emptied once swept)
// until its tombstone is deleted; check Expired.
func (s *Store) Page(id string) (Page, bool) {
	var p Page
	var ok bool
	s.read(func(txn *memdb.Txn) {
		if raw, _ := txn.First(tPage, "id", id); raw != nil {
			p, ok = *raw.(*Page), true
		}
	})
	return p, ok
}

// Pages lists every page (for the operator and tests).
func (s *Store) Pages() []Page {
	var out []Page
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tPage, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			out = append(out, *obj.(*Page))
		}
	})
	return out
}

// RevokePage ends a page at once, as if it had expired (410): its payment did not arrive.
func (s *Store) RevokePage(id string) error {
	return s.mutate(func(txn *memdb.Txn) (*record, error) {
		raw, _ := txn.First(tPage, "id", id)
		if raw == nil {
			return nil, ErrNotFound
		}
		p := *raw.(*Page)
		p.HTML, p.ExpiresAt = "", s.now()
		return &record{Op: opPage, Page: &p}, nil
	})
}
