package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
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
	// Unmarshal checks the whole input first (trailing data included), then
	// fills what it can and reports the first wrongly typed value.
	err = json.Unmarshal(body, v)
	var typ *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typ) {
		return nil, jsonError(err)
	}
	probs := unknownFields(body, v)
	if typ != nil {
		d := typeProblem(typ, body)
		if d.Field == "body" {
			return nil, apierr.Validation(d) // not even an object: nothing else to check
		}
		probs = append(probs, d)
	}
	if len(probs) == 0 {
		probs = nestedUnknownField(body, v)
	}
	return probs, nil
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

func jsonError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body",
			Issue: fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())})
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body", Issue: "malformed JSON: unexpected end of input"})
	default:
		return apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body", Issue: "malformed JSON: " + err.Error()})
	}
}

// typeProblem names a wrongly typed value by its JSON path.
func typeProblem(typ *json.UnmarshalTypeError, body []byte) apierr.Detail {
	field := typ.Field
	if field == "" {
		field = "body"
	} else if i := badElement(body, typ); i >= 0 {
		field = fmt.Sprintf("%s[%d]", field, i)
	}
	return apierr.Detail{Code: apierr.DetailInvalidValue, Field: field,
		Issue: fmt.Sprintf("must be %s, not %s", jsonKind(typ.Type.Kind()), typ.Value)}
}

// nestedUnknownField finds a member unknown to a nested object type (the
// top-level ones are listed by unknownFields); the strict decoder names the
// first only, by its member name.
func nestedUnknownField(body []byte, v any) apierr.Problems {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(reflect.New(reflect.TypeOf(v).Elem()).Interface())
	if err == nil || !strings.HasPrefix(err.Error(), "json: unknown field ") {
		return nil
	}
	var probs apierr.Problems
	probs.Add(apierr.DetailUnknownField, strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field")
	return probs
}

// unknownFields lists every top-level member of body that the struct v
// points to has no field for, so one answer names them all (the decoder
// stops at the first).
func unknownFields(body []byte, v any) apierr.Problems {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var members map[string]json.RawMessage
	if t.Kind() != reflect.Struct || json.Unmarshal(body, &members) != nil {
		return nil
	}
	known := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = t.Field(i).Name
		}
		known[name] = true
	}
	var probs apierr.Problems
	unknown := 0
	for _, name := range slices.Sorted(maps.Keys(members)) {
		if known[name] {
			continue
		}
		if unknown++; unknown <= maxUnknownFields {
			probs.Add(apierr.DetailUnknownField, name, "unknown field")
		}
	}
	if unknown > maxUnknownFields {
		probs.Add(geo.CodeTooManyProblems, "body", fmt.Sprintf("%d more unknown fields are not listed", unknown-maxUnknownFields))
	}
	return probs
}

// maxUnknownFields is the most unknown members an answer names: a body of
// a million small members is not echoed back name by name.
const maxUnknownFields = 1000

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	default:
		return "a number"
	}
}

// badElement finds which element of a top-level array member holds the
// wrongly typed value of typ, so the problem names its JSON path
// (scopes[1]); -1 when the member is not such an array.
func badElement(body []byte, typ *json.UnmarshalTypeError) int {
	var members map[string]json.RawMessage
	if strings.Contains(typ.Field, ".") || json.Unmarshal(body, &members) != nil {
		return -1
	}
	var elems []json.RawMessage
	if json.Unmarshal(members[typ.Field], &elems) != nil {
		return -1
	}
	for i, e := range elems {
		if json.Unmarshal(e, reflect.New(typ.Type).Interface()) != nil {
			return i
		}
	}
	return -1
}
