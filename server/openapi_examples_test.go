package server

// The OpenAPI document's examples conform to their own schemas.

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestOpenAPI_Examples checks every example of the document against the
// schema beside it.
func TestOpenAPI_Examples(t *testing.T) {
	doc := loadOpenAPI(t)
	sc := oaSchemaChecker{doc: doc}
	n := 0
	oaWalk(doc, "", func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if ex, ok := m["example"]; ok {
			if schema, ok := m["schema"]; ok {
				n++
				for _, e := range sc.check(schema, ex, ptr+"/example") {
					t.Error(e)
				}
			}
		}
		// Schema Objects carry a list of examples (Media Type Objects a map).
		if exs, ok := m["examples"].([]any); ok {
			for i, ex := range exs {
				n++
				for _, e := range sc.check(m, ex, fmt.Sprintf("%s/examples/%d", ptr, i)) {
					t.Error(e)
				}
			}
		}
	})
	if n == 0 {
		t.Error("found no examples to check")
	}
}

// oaSchemaChecker validates a JSON value against the subset of JSON Schema
// 2020-12 that openapi.json uses: boolean schemas, $ref, allOf, anyOf,
// if/then/else, type, const, enum, required, properties,
// additionalProperties (false or a schema), items, min/maxItems,
// min/maxProperties, min/maxLength, pattern, minimum, maximum. Other
// keywords are ignored.
type oaSchemaChecker struct{ doc map[string]any }

func (sc oaSchemaChecker) check(schema any, v any, at string) []string {
	if b, ok := schema.(bool); ok {
		if !b {
			return []string{fmt.Sprintf("%s: no value is allowed here, got %s", at, oaShort(v))}
		}
		return nil
	}
	s, ok := schema.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: schema is %T, not an object", at, schema)}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if ref, ok := s["$ref"].(string); ok {
		target, ok := oaResolve(sc.doc, ref)
		if !ok {
			fail("$ref %q does not resolve", ref)
		} else {
			errs = append(errs, sc.check(target, v, at)...)
		}
	}
	for _, sub := range oaList(s["allOf"]) {
		errs = append(errs, sc.check(sub, v, at)...)
	}
	if branches := oaList(s["anyOf"]); len(branches) > 0 {
		var first []string
		for i, sub := range branches {
			e := sc.check(sub, v, at)
			if len(e) == 0 {
				first = nil
				break
			}
			if i == 0 {
				first = e
			}
		}
		if first != nil {
			fail("matches no branch of anyOf; the first says: %s", strings.Join(first, "; "))
		}
	}
	if cond, ok := s["if"]; ok {
		branch := "else"
		if len(sc.check(cond, v, at)) == 0 {
			branch = "then"
		}
		if sub, ok := s[branch]; ok {
			errs = append(errs, sc.check(sub, v, at)...)
		}
	}
	if ty, ok := s["type"]; ok {
		allowed := oaStrings(ty)
		if s, ok := ty.(string); ok {
			allowed = []string{s}
		}
		got := oaJSONType(v)
		if !slices.Contains(allowed, got) && !(got == "integer" && slices.Contains(allowed, "number")) {
			fail("got %s %s, want type %v", got, oaShort(v), allowed)
			return errs
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, v) {
		fail("got %s, want %s", oaShort(v), oaShort(c))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		fail("got %s, want one of %s", oaShort(v), oaShort(enum))
	}
	switch x := v.(type) {
	case string:
		n := float64(utf8.RuneCountInString(x))
		if min, ok := s["minLength"].(float64); ok && n < min {
			fail("%q is shorter than %v", x, min)
		}
		if max, ok := s["maxLength"].(float64); ok && n > max {
			fail("%q is longer than %v", x, max)
		}
		if p, ok := s["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				fail("pattern %q: %v", p, err)
			} else if !re.MatchString(x) {
				fail("%q does not match %s", x, p)
			}
		}
	case float64:
		if min, ok := s["minimum"].(float64); ok && x < min {
			fail("%v is below %v", x, min)
		}
		if max, ok := s["maximum"].(float64); ok && x > max {
			fail("%v is above %v", x, max)
		}
	case []any:
		if min, ok := s["minItems"].(float64); ok && float64(len(x)) < min {
			fail("%d items, want at least %v", len(x), min)
		}
		if max, ok := s["maxItems"].(float64); ok && float64(len(x)) > max {
			fail("%d items, want at most %v", len(x), max)
		}
		if items, ok := s["items"]; ok {
			for i, it := range x {
				errs = append(errs, sc.check(items, it, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range oaStrings(s["required"]) {
			if _, ok := x[r]; !ok {
				fail("member %q is required", r)
			}
		}
		if min, ok := s["minProperties"].(float64); ok && float64(len(x)) < min {
			fail("%d members, want at least %v", len(x), min)
		}
		if max, ok := s["maxProperties"].(float64); ok && float64(len(x)) > max {
			fail("%d members, want at most %v", len(x), max)
		}
		for k, mv := range x {
			if ps, ok := props[k]; ok {
				errs = append(errs, sc.check(ps, mv, at+"."+k)...)
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, sc.check(ap, mv, at+"."+k)...)
			} else if s["additionalProperties"] == false {
				fail("member %q is not allowed", k)
			}
		}
	}
	return errs
}

func oaJSONType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func oaShort(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
