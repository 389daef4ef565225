package report

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Unpack reads an archive the archive job wrote: its files by path, and
// its manifest. It checks what the manifest promises: the manifest is the
// last file, it lists every other file in the order written, and each
// file has the SHA-256 and size it lists. It returns the first broken
// promise as an error, or one from reading the zip.
func Unpack(body []byte) (map[string][]byte, Manifest, error) {
	var m Manifest
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, m, fmt.Errorf("open zip: %w", err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, m, fmt.Errorf("open %s: %w", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, m, fmt.Errorf("read %s: %w", f.Name, err)
		}
		files[f.Name] = b
		names = append(names, f.Name)
	}
	if len(names) == 0 || names[len(names)-1] != PathManifest {
		return nil, m, fmt.Errorf("the last file is not %s: %v", PathManifest, names)
	}
	if err := json.Unmarshal(files[PathManifest], &m); err != nil {
		return nil, m, fmt.Errorf("%s: %w", PathManifest, err)
	}
	var listed []string
	for _, f := range m.Files {
		listed = append(listed, f.Path)
		b, ok := files[f.Path]
		sum := sha256.Sum256(b)
		if !ok || hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(b)) != f.SizeBytes {
			return nil, m, fmt.Errorf("%s: in the zip %v, %d bytes, SHA-256 %x; the manifest says %d bytes, %s",
				f.Path, ok, len(b), sum, f.SizeBytes, f.SHA256)
		}
	}
	if want := names[:len(names)-1]; !slices.Equal(listed, want) {
		return nil, m, fmt.Errorf("the manifest lists %v, the zip holds %v besides it", listed, want)
	}
	return files, m, nil
}

// Lines splits a JSON Lines file of an archive into its lines. It returns
// an error when a non-empty file does not end with a newline.
func Lines(b []byte) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return out, errors.New("the JSON Lines file does not end with a newline")
	}
	return out, nil
}
