package apitest_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// zipOf writes files in order and then manifest.json, listing listed
// with the hash of what hashed maps them to (their own content if absent).
func zipOf(t *testing.T, files [][2]string, listed []string, hashed map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	content := map[string]string{}
	for _, f := range files {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
		content[f[0]] = f[1]
	}
	var entries []string
	for _, p := range listed {
		c, ok := hashed[p]
		if !ok {
			c = content[p]
		}
		sum := sha256.Sum256([]byte(c))
		entries = append(entries, fmt.Sprintf(`{"path":%q,"sha256":%q,"sizeBytes":%d}`, p, hex.EncodeToString(sum[:]), len(c)))
	}
	w, _ := zw.Create("manifest.json")
	fmt.Fprintf(w, `{"files":[%s]}`, strings.Join(entries, ","))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUnzipArchive(t *testing.T) {
	files := [][2]string{{"a.json", `{"a":1}`}, {"b.jsonl", "{}\n{}\n"}}
	good := zipOf(t, files, []string{"a.json", "b.jsonl"}, nil)
	got := apitest.UnzipArchive(t, good, "manifest.json")
	if string(got["a.json"]) != `{"a":1}` || len(apitest.JSONLines(t, got["b.jsonl"])) != 2 {
		t.Errorf("files: %q", got)
	}
	for name, body := range map[string][]byte{
		"WrongHash":  zipOf(t, files, []string{"a.json", "b.jsonl"}, map[string]string{"a.json": "other"}),
		"NotListed":  zipOf(t, files, []string{"a.json"}, nil),
		"OutOfOrder": zipOf(t, files, []string{"b.jsonl", "a.json"}, nil),
		"NotAZip":    []byte("PK?"),
	} {
		if errs := failures(t, func(tb testing.TB) { apitest.UnzipArchive(tb, body, "manifest.json") }); len(errs) == 0 {
			t.Errorf("%s: no failure reported", name)
		}
	}
	if errs := failures(t, func(tb testing.TB) { apitest.JSONLines(tb, []byte("{}\n{}")) }); len(errs) != 1 {
		t.Errorf("JSON Lines without a final newline: %v, want one failure", errs)
	}
}
