package storage

import (
	"bytes"
	"encoding/json"
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
