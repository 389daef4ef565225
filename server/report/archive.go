package report

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/storage"
)

// The paths of an archive's files (readme explains them to its reader).
const (
	PathReadme     = "README.txt"
	PathPolygons   = "polygons.geojson"
	PathEvidence   = "evidence.jsonl"
	PathDDS        = "dds.jsonl"
	PathDDSLedger  = "dds-ledger.jsonl"
	PathCheckpoint = "ledger/checkpoint.json"
	PathPublicKey  = "ledger/public-key.json"
	PathManifest   = "manifest.json"
)

// Format names the layout below, in the manifest (the OpenAPI document
// states it too).
const Format = "eudr-archive/1"

// A page of the store, read in its own short read transaction and written
// before the next is read, ends after Options.PageItems records or once it
// holds archivePageBytes: what a job holds in memory is one page, however
// long the period.
const archivePageBytes = 4 << 20

// readme is the README.txt of every archive.
const readme = `EUDR compliance archive
=======================

This archive holds an organisation's records of one environment for a
period, as the appliance held them at the time in manifest.json "asOf".

manifest.json       what the archive is (report, organisation, environment,
                    period, asOf, appliance version, ledger checkpoint) and
                    every other file with its SHA-256 and size in bytes.
polygons.geojson    a GeoJSON FeatureCollection of the plots screened in
                    the period, one feature per line: each feature as it
                    was sent, with polygonId, eudrStatus and failureReason
                    set as the first members of its properties. Without the
                    text of those three members, a feature is the feature
                    as sent byte for byte, whitespace removed (unless it
                    was sent with properties of those names): its SHA-256
                    is the inputSha256 of its evidence.
evidence.jsonl      one line per plot, in the order of polygons.geojson:
                    the evidence document of its screening with its ledger
                    entry and inclusion proof ("ledger" member), as
                    GET /polygons/{polygonId}/evidence answers it. POST
                    /evidence/verify checks a line; offline, the document
                    without "ledger", as canonical JSON (keys sorted, no
                    whitespace), hashes to the entry's evidenceSha256.
dds.jsonl           one line per due-diligence statement created in the
                    period, as GET /declarations/dds/{ddsId} answers it:
                    its Annex II statement, EU numbers and history.
dds-ledger.jsonl    one line per statement, in the order of dds.jsonl: the
                    ledger entries of its history with their inclusion
                    proofs.
reports/<ddsId>.pdf one per statement, in the order of dds.jsonl: its
                    report as GET /declarations/dds/{ddsId}/report.pdf
                    answers it (Annex II content, EU numbers, status
                    history with the ledger proof of each change, the
                    report of each of its batches with their plots), made
                    when the archive was written: a change after "asOf"
                    may show in it. The same statement gives the same
                    bytes: its SHA-256 can be compared with a copy
                    downloaded at another time, and is recorded in the
                    appliance's ledger (POST /reports/verify finds it).
                    A report that could not be made is a note instead,
                    reports/<ddsId>.txt.
ledger/checkpoint.json  the signed checkpoint (C2SP signed note) of the
                    ledger tree every proof in this archive is made in.
ledger/public-key.json  the note verifier key that signs checkpoints.

An entry's transactionHash is SHA-256(0x00 || its bytes), "data" being
those bytes in base64 (RFC 6962 leaf hash); proofs are RFC 6962 inclusion
proofs, hashes in lowercase hex. Records anchored after the checkpoint are
not in the archive (plots) or not proved in it (statement changes).
`

// Manifest is manifest.json.
type Manifest struct {
	Format       string         `json:"format"`
	ReportID     string         `json:"reportId"`
	Organisation string         `json:"organisation"`
	Environment  string         `json:"environment"`
	Period       Period         `json:"period"`
	AsOf         string         `json:"asOf"`
	CreatedAt    string         `json:"createdAt"`
	AppVersion   string         `json:"appVersion"`
	Ledger       ManifestLedger `json:"ledger"`
	Counts       Counts         `json:"counts"`
	Files        []ManifestFile `json:"files"`
}

// Period is the report's period, both ends included.
type Period struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ManifestLedger names the checkpoint the archive's proofs are made in and
// the key that signs it; treeSize 0 and rootHash null when the log had no
// checkpoint.
type ManifestLedger struct {
	KeyName     string  `json:"keyName"`
	VerifierKey string  `json:"verifierKey"`
	TreeSize    int64   `json:"treeSize"`
	RootHash    *string `json:"rootHash"`
}

// Counts are how many plots and statements the archive holds.
type Counts struct {
	Polygons int `json:"polygons"`
	DDS      int `json:"dds"`
}

// ManifestFile is a file of the archive as the manifest lists it.
type ManifestFile struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	SizeBytes int64  `json:"sizeBytes"`
}

// Checkpoint is ledger/checkpoint.json: the signed checkpoint, as GET
// /ledger/checkpoint answers it.
type Checkpoint struct {
	TreeSize int64   `json:"treeSize"`
	RootHash string  `json:"rootHash"`
	Note     string  `json:"note"`
	SignedAt *string `json:"signedAt"` // null for a checkpoint signed before the store recorded the time
}

// PublicKey is ledger/public-key.json: the key that signs checkpoints, as
// GET /ledger/public-key answers it.
type PublicKey struct {
	KeyName     string `json:"keyName"`
	VerifierKey string `json:"verifierKey"`
}

// snapshot is what an archive holds: records of [from, end), end being the
// end of the period or the time the job started, whichever is first, and
// anchored in the tenant's ledger within checkpoint cp (nil when the log
// has none), in whose tree every proof of the archive is made.
type snapshot struct {
	t         storage.Tenant
	rep       *storage.Report
	from, end time.Time
	asOf      time.Time
	cp        *ledger.Checkpoint
}

// covers reports whether the ledger entry index (nil: none) is in the
// snapshot's checkpoint.
func (s *snapshot) covers(index *int64) bool {
	return index == nil || (s.cp != nil && *index < s.cp.Size)
}

// archive is a zip being written, file by file, with the SHA-256 and size
// of each file for the manifest.
type archive struct {
	zw       *zip.Writer
	modified time.Time
	files    []ManifestFile
}

// countingWriter counts the bytes written through it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// add writes one file of the archive with write.
func (z *archive) add(name string, write func(io.Writer) error) error {
	fw, err := z.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: z.modified})
	if err != nil {
		return fmt.Errorf("add %s to the archive: %w", name, err)
	}
	h := sha256.New()
	var n countingWriter
	bw := bufio.NewWriterSize(io.MultiWriter(fw, h, &n), 64<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s of the archive: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s of the archive: %w", name, err)
	}
	z.files = append(z.files, ManifestFile{Path: name, SHA256: hex.EncodeToString(h.Sum(nil)), SizeBytes: n.n})
	return nil
}

// addJSON writes v as an indented JSON file (without HTML escaping, as
// the API answers).
func (z *archive) addJSON(name string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return z.add(name, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// writeArchive writes the zip of a report to w.
func (s *Service) writeArchive(ctx context.Context, t storage.Tenant, rep *storage.Report, w io.Writer) error {
	snap := &snapshot{t: t, rep: rep, from: rep.From, end: rep.To.Add(time.Nanosecond)}
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		snap.asOf = tx.Now()
		cp, err := ledger.LatestCheckpoint(tx.Tx, anchor.Log(t))
		switch {
		case err == nil:
			snap.cp = &cp
		case !errors.Is(err, ledger.ErrNotFound):
			return fmt.Errorf("latest checkpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if asOf := snap.asOf.Add(time.Nanosecond); asOf.Before(snap.end) {
		snap.end = asOf
	}

	bw := bufio.NewWriterSize(w, 256<<10)
	z := &archive{zw: zip.NewWriter(bw), modified: snap.asOf}
	if err := z.add(PathReadme, func(w io.Writer) error {
		_, err := io.WriteString(w, readme)
		return err
	}); err != nil {
		return err
	}
	var counts Counts
	if counts.Polygons, err = s.archivePolygons(ctx, snap, z); err != nil {
		return err
	}
	if counts.DDS, err = s.archiveDDS(ctx, snap, z); err != nil {
		return err
	}
	led := ManifestLedger{KeyName: s.o.Ledger.KeyName(), VerifierKey: s.o.Ledger.VerifierKey()}
	if snap.cp != nil {
		root := anchor.Hex(snap.cp.Root)
		led.TreeSize, led.RootHash = snap.cp.Size, &root
		cp := Checkpoint{TreeSize: snap.cp.Size, RootHash: root, Note: string(snap.cp.Note)}
		if !snap.cp.SignedAt.IsZero() {
			cp.SignedAt = storage.Optional(storage.FormatTime(snap.cp.SignedAt))
		}
		if err := z.addJSON(PathCheckpoint, cp); err != nil {
			return err
		}
	}
	if err := z.addJSON(PathPublicKey, PublicKey{KeyName: led.KeyName, VerifierKey: led.VerifierKey}); err != nil {
		return err
	}
	if err := z.addJSON(PathManifest, Manifest{Format: Format, ReportID: rep.ID,
		Organisation: t.Org, Environment: string(t.Env),
		Period: Period{From: storage.FormatTime(rep.From), To: storage.FormatTime(rep.To)},
		AsOf:   storage.FormatTime(snap.asOf), CreatedAt: storage.FormatTime(s.o.Now()), AppVersion: s.o.Version,
		Ledger: led, Counts: counts, Files: z.files}); err != nil {
		return err
	}
	if err := z.zw.Close(); err != nil {
		return fmt.Errorf("finish the archive: %w", err)
	}
	return bw.Flush()
}

// spool is a temporary file beside the report that holds one file of the
// archive while another is written (a zip is written one file at a time),
// so that both come from one pass over the store.
type spool struct {
	f *os.File
	w *bufio.Writer
}

func (s *Service) newSpool(snap *snapshot) (*spool, error) {
	f, err := os.CreateTemp(s.o.Dir, snap.rep.ID+".zip.spool-*")
	if err != nil {
		return nil, fmt.Errorf("create spool file: %w", err)
	}
	return &spool{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// line writes b and a newline.
func (sp *spool) line(b []byte) error {
	sp.w.Write(b)
	return sp.w.WriteByte('\n') // bufio keeps the first error
}

// copyTo copies what was written to w.
func (sp *spool) copyTo(w io.Writer) error {
	if err := sp.rewind(); err != nil {
		return err
	}
	_, err := io.Copy(w, sp.f)
	return err
}

// rewind flushes what was written and goes back to its start, to read it.
func (sp *spool) rewind() error {
	if err := sp.w.Flush(); err != nil {
		return err
	}
	_, err := sp.f.Seek(0, io.SeekStart)
	return err
}

func (sp *spool) close() {
	sp.f.Close()
	os.Remove(sp.f.Name())
}
