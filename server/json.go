package server

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
)

// writeJSON marshals v before writing anything, so an encoding failure still
// becomes a clean 500 envelope.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := marshalBody(v)
	if err != nil {
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("encode response")
		status = http.StatusInternalServerError
		body = []byte(`{"code":"INTERNAL","message":"internal error","details":[]}` + "\n")
		infoFrom(r.Context()).code = apierr.CodeInternal
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeNoContent answers 204.
func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// decodeJSON reads the request body into v. It refuses another content type
// (415), a body over the limit (413) and malformed JSON or trailing data
// (400). Well-formed JSON with unknown members (names are exact: a member
// that differs only in case is unknown) or wrongly typed ones is decoded as
// far as it goes and those problems are returned, so the caller can add its
// own checks and answer every problem at once (apierr.Merge).
func decodeJSON(r *http.Request, v any, mediaTypes ...string) (apierr.Problems, error) {
	if err := checkContentType(r, mediaTypes...); err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, readBodyError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body", Issue: "request body is empty; a JSON object is required"})
	}
	return apierr.DecodeJSON(body, v)
}

// bufferedBody is a request body already read into memory (by the
// idempotency middleware, to fingerprint it), which readBody hands on
// without copying: a polygon request may be tens of megabytes.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func newBufferedBody(data []byte) *bufferedBody {
	return &bufferedBody{Reader: bytes.NewReader(data), data: data}
}

func (*bufferedBody) Close() error { return nil }

// readBody returns the whole request body. It reads it once, into a
// buffer sized from Content-Length (which the body limit has checked).
func readBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*bufferedBody); ok {
		return b.data, nil
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}

func checkContentType(r *http.Request, allowed ...string) error {
	if len(allowed) == 0 {
		allowed = []string{"application/json"}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil // curl --data-binary without -H: take it as JSON
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil {
		for _, a := range allowed {
			if mt == a {
				return nil
			}
		}
	}
	return &apierr.Error{Status: http.StatusUnsupportedMediaType, Code: apierr.CodeUnsupportedMediaType,
		Message: fmt.Sprintf("Content-Type %q is not supported; send %s", ct, strings.Join(allowed, " or ")),
		Details: []apierr.Detail{{Code: apierr.DetailInvalidValue, Field: "headers.Content-Type", Issue: "must be " + strings.Join(allowed, " or ")}}}
}

// readBodyError maps a body read failure: over the size limit is 413.
func readBodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Code: apierr.CodePayloadTooLarge,
			Message: fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), Err: err}
	}
	return apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body", Issue: "request body could not be read"})
}
