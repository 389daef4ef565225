package apitest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"testing"
)

// UnzipArchive returns the files of an archive report (a zip whose last
// file, manifestPath, lists every other file with its SHA-256 and size)
// by path. It fails the test on a zip it cannot read and on every promise
// of the manifest the archive breaks: the manifest not last, a file not
// listed or listed out of the order written, a wrong hash or size.
func UnzipArchive(tb testing.TB, body []byte, manifestPath string) map[string][]byte {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		tb.Fatalf("open zip: %v", err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			tb.Fatalf("open %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatalf("read %s: %v", f.Name, err)
		}
		files[f.Name] = b
		names = append(names, f.Name)
	}
	if len(names) == 0 || names[len(names)-1] != manifestPath {
		tb.Fatalf("the last file is not %s: %v", manifestPath, names)
	}
	var m struct {
		Files []struct {
			Path      string `json:"path"`
			SHA256    string `json:"sha256"`
			SizeBytes int64  `json:"sizeBytes"`
		} `json:"files"`
	}
	if err := json.Unmarshal(files[manifestPath], &m); err != nil {
		tb.Fatalf("%s: %v: %s", manifestPath, err, files[manifestPath])
	}
	var listed []string
	for _, f := range m.Files {
		listed = append(listed, f.Path)
		b, ok := files[f.Path]
		sum := sha256.Sum256(b)
		if !ok || hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(b)) != f.SizeBytes {
			tb.Errorf("%s: in the zip %v, %d bytes, SHA-256 %x; the manifest says %d bytes, %s", f.Path, ok, len(b), sum, f.SizeBytes, f.SHA256)
		}
	}
	if want := names[:len(names)-1]; !slices.Equal(listed, want) {
		tb.Errorf("the manifest lists %v, the zip holds %v besides it", listed, want)
	}
	return files
}

// JSONLines splits a JSON Lines file into its lines; it fails the test
// when a non-empty file does not end with a newline.
func JSONLines(tb testing.TB, b []byte) [][]byte {
	tb.Helper()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		tb.Error("the JSON Lines file does not end with a newline")
	}
	return out
}
