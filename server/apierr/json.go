package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/eudr/eudr/geo"
)

// DecodeJSON decodes a request body into v and says what is wrong with it
// as the API answers it. Malformed JSON or trailing data is a 400 error.
// Well-formed JSON with unknown members (names are exact: a member that
// differs only in case is unknown) or wrongly typed ones is decoded as far
// as it goes and those problems are returned, so the caller can add its
// own checks and answer every problem at once (Merge).
func DecodeJSON(body []byte, v any) (Problems, error) {
	// Unmarshal checks the whole input first (trailing data included), then
	// fills what it can and reports the first wrongly typed value.
	err := json.Unmarshal(body, v)
	var typ *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typ) {
		return nil, jsonError(err)
	}
	probs := unknownFields(body, v)
	if typ != nil {
		d := typeProblem(typ, body)
		if d.Field == "body" {
			return nil, Validation(d) // not even an object: nothing else to check
		}
		probs = append(probs, d)
	}
	if len(probs) == 0 {
		probs = nestedUnknownField(body, v)
	}
	return probs, nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return Validation(Detail{Code: DetailMalformedJSON, Field: "body",
			Issue: fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())})
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Validation(Detail{Code: DetailMalformedJSON, Field: "body", Issue: "malformed JSON: unexpected end of input"})
	default:
		return Validation(Detail{Code: DetailMalformedJSON, Field: "body", Issue: "malformed JSON: " + err.Error()})
	}
}

// typeProblem names a wrongly typed value by its JSON path.
func typeProblem(typ *json.UnmarshalTypeError, body []byte) Detail {
	field := typ.Field
	if field == "" {
		field = "body"
	} else if i := badElement(body, typ); i >= 0 {
		field = fmt.Sprintf("%s[%d]", field, i)
	}
	return Detail{Code: DetailInvalidValue, Field: field,
		Issue: fmt.Sprintf("must be %s, not %s", jsonKind(typ.Type.Kind()), typ.Value)}
}

// nestedUnknownField finds a member unknown to a nested object type (the
// top-level ones are listed by unknownFields); the strict decoder names the
// first only, by its member name.
func nestedUnknownField(body []byte, v any) Problems {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(reflect.New(reflect.TypeOf(v).Elem()).Interface())
	if err == nil || !strings.HasPrefix(err.Error(), "json: unknown field ") {
		return nil
	}
	var probs Problems
	probs.Add(DetailUnknownField, strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field")
	return probs
}

// unknownFields lists every top-level member of body that the struct v
// points to has no field for, so one answer names them all (the decoder
// stops at the first).
func unknownFields(body []byte, v any) Problems {
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
	var probs Problems
	unknown := 0
	for _, name := range slices.Sorted(maps.Keys(members)) {
		if known[name] {
			continue
		}
		if unknown++; unknown <= MaxUnknownFields {
			probs.Add(DetailUnknownField, name, "unknown field")
		}
	}
	if unknown > MaxUnknownFields {
		probs.Add(geo.CodeTooManyProblems, "body", fmt.Sprintf("%d more unknown fields are not listed", unknown-MaxUnknownFields))
	}
	return probs
}

// MaxUnknownFields is the most unknown members an answer names: a body of
// a million small members is not echoed back name by name.
const MaxUnknownFields = 1000

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
