package storage

import (
	"bytes"
	"encoding/json"
	"time"
)

// MarshalJSON is json.Marshal without HTML escaping, for the documents the
// store keeps and the API sends: the API sends JSON,
// never HTML, and a client's "A&B" comes back as it was sent, not as
// "A\u0026B" (which also keeps hashes over stored documents simple).
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// TimeFormat is RFC 3339 UTC with milliseconds: the one time format of the
// API and of the documents the store keeps.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// FormatTimePtr renders an optional time; nil stays nil (null in JSON).
func FormatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := FormatTime(*t)
	return &s
}

// Optional is s, or nil (null in JSON) when s is empty.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
