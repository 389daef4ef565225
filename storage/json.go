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

// ParseTimeBound reads one end of an inclusive time range, as the API's
// filters and periods take them: an RFC 3339 date-time or a date. A start
// (end false) is the instant written, or the first of the date; an end
// covers the whole last unit written: the whole day of a date, the whole
// millisecond of a date-time (the resolution of TimeFormat), so an end
// copied from a document that shows a time includes that time. It returns
// an error when s is neither.
func ParseTimeBound(s string, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if end && t.Nanosecond()%int(time.Millisecond) == 0 {
			t = t.Add(time.Millisecond - time.Nanosecond)
		}
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, err
	}
	if end {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
}
