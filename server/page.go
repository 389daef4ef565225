package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

const (
	defaultPageLimit = 100
	maxPageLimit     = 1000
)

// parsePage reads ?limit= (1-1000, default 100) and ?cursor= (the last ID of
// the previous page) of a list request.
func parsePage(r *http.Request) (storage.Page, error) {
	n, err := parseLimit(r, defaultPageLimit)
	return storage.Page{Limit: n, After: r.URL.Query().Get("cursor")}, err
}

// parseLimit reads ?limit= (1-1000, default def).
func parseLimit(r *http.Request, def int) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPageLimit {
		return def, apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "query.limit",
			Issue: fmt.Sprintf("must be an integer from 1 to %d", maxPageLimit)})
	}
	return n, nil
}

// setNextPage adds the Link and X-Next-Cursor headers that point at the
// page after the one being sent: the request again, filters included, with
// cursor (the last ID of this page for most lists) and the page's limit.
func setNextPage(w http.ResponseWriter, r *http.Request, p storage.Page, cursor string) {
	q := r.URL.Query()
	q.Set("cursor", cursor)
	q.Set("limit", strconv.Itoa(p.Limit))
	w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, r.URL.Path, q.Encode()))
	w.Header().Set("X-Next-Cursor", cursor)
}

// writePage sends one page of an in-memory list that is already newest
// first and ordered by ID descending.
func writePage[T any](w http.ResponseWriter, r *http.Request, items []T, p storage.Page, id func(T) string) {
	start := 0
	if p.After != "" {
		start = len(items)
		for i, it := range items {
			if id(it) < p.After {
				start = i
				break
			}
		}
	}
	items = items[start:]
	if len(items) > p.Limit {
		items = items[:p.Limit]
		setNextPage(w, r, p, id(items[len(items)-1]))
	}
	writeJSON(w, r, http.StatusOK, items)
}
