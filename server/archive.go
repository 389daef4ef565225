package server

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/storage"
)

// The files of an archive (archiveReadme explains them to its reader).
const (
	archiveReadmeFile     = "README.txt"
	archivePolygonsFile   = "polygons.geojson"
	archiveEvidenceFile   = "evidence.jsonl"
	archiveDDSFile        = "dds.jsonl"
	archiveDDSLedgerFile  = "dds-ledger.jsonl"
	archiveCheckpointFile = "ledger/checkpoint.json"
	archivePublicKeyFile  = "ledger/public-key.json"
	archiveManifestFile   = "manifest.json"
)

// archiveFormat names the layout below, in the manifest.
const archiveFormat = "eudr-archive/1"

// An archive job reads the store page by page, each page in its own short
// read transaction, and writes it before reading the next: what it holds
// in memory is one page, however long the period. A page ends after
// archivePageItems records or once it holds archivePageBytes.
const (
	archivePageItems = 256
	archivePageBytes = 4 << 20
)

// archiveReadme is the README.txt of every archive.
const archiveReadme = `EUDR compliance archive
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
ledger/checkpoint.json  the signed checkpoint (C2SP signed note) of the
                    ledger tree every proof in this archive is made in.
ledger/public-key.json  the note verifier key that signs checkpoints.

An entry's transactionHash is SHA-256(0x00 || its bytes), "data" being
those bytes in base64 (RFC 6962 leaf hash); proofs are RFC 6962 inclusion
proofs, hashes in lowercase hex. Records anchored after the checkpoint are
not in the archive (plots) or not proved in it (statement changes).
`

// archiveSum is the SHA-256 (hex) and size of a written zip.
type archiveSum struct {
	sha256 string
	size   int64
}

// countingWriter counts the bytes written through it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// writeReport writes a report's zip to its file in the reports directory,
// through a temporary file renamed into place once complete and synced: a
// crash never leaves half an archive under the final name. Temporary files
// of an earlier, interrupted run are removed first.
func (a *App) writeReport(ctx context.Context, t storage.Tenant, rep *storage.Report) (archiveSum, error) {
	path := a.reportFile(rep.ID)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return archiveSum{}, fmt.Errorf("create reports dir: %w", err)
	}
	leftovers, _ := filepath.Glob(path + ".*") // <id>.zip.tmp-*, <id>.zip.spool-*
	for _, f := range leftovers {
		os.Remove(f)
	}
	var sum archiveSum
	_, err := storage.WriteFileAtomic(path, func(w io.Writer) (int64, error) {
		h := sha256.New()
		var n countingWriter
		if err := a.writeArchive(ctx, t, rep, io.MultiWriter(w, h, &n)); err != nil {
			return 0, err
		}
		sum = archiveSum{sha256: hex.EncodeToString(h.Sum(nil)), size: n.n}
		return n.n, nil
	})
	return sum, err
}

// archiveSnapshot is what an archive holds: records of [from, end), end
// being the end of the period or the time the job started, whichever is
// first, and anchored in the tenant's ledger within checkpoint cp (nil
// when the log has none), in whose tree every proof of the archive is made.
type archiveSnapshot struct {
	t         storage.Tenant
	rep       *storage.Report
	from, end time.Time
	asOf      time.Time
	cp        *ledger.Checkpoint
	dir       string // for spool files
}

// covers reports whether the ledger entry index (nil: none) is in the
// snapshot's checkpoint.
func (s *archiveSnapshot) covers(index *int64) bool {
	return index == nil || (s.cp != nil && *index < s.cp.Size)
}

// archive is a zip being written, file by file, with the SHA-256 and size
// of each file for the manifest.
type archive struct {
	zw       *zip.Writer
	modified time.Time
	files    []archiveFile
}

type archiveFile struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	SizeBytes int64  `json:"sizeBytes"`
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
	z.files = append(z.files, archiveFile{Path: name, SHA256: hex.EncodeToString(h.Sum(nil)), SizeBytes: n.n})
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

// archiveManifest is manifest.json.
type archiveManifest struct {
	Format       string        `json:"format"`
	ReportID     string        `json:"reportId"`
	Organisation string        `json:"organisation"`
	Environment  string        `json:"environment"`
	Period       archivePeriod `json:"period"`
	AsOf         string        `json:"asOf"`
	CreatedAt    string        `json:"createdAt"`
	AppVersion   string        `json:"appVersion"`
	Ledger       archiveLedger `json:"ledger"`
	Counts       archiveCounts `json:"counts"`
	Files        []archiveFile `json:"files"`
}

// archivePeriod is the report's period, both ends included.
type archivePeriod struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// archiveLedger names the checkpoint the archive's proofs are made in and
// the key that signs it; treeSize 0 and rootHash null when the log had no
// checkpoint.
type archiveLedger struct {
	KeyName     string  `json:"keyName"`
	VerifierKey string  `json:"verifierKey"`
	TreeSize    int64   `json:"treeSize"`
	RootHash    *string `json:"rootHash"`
}

type archiveCounts struct {
	Polygons int `json:"polygons"`
	DDS      int `json:"dds"`
}

// writeArchive writes the zip of a report to w.
func (a *App) writeArchive(ctx context.Context, t storage.Tenant, rep *storage.Report, w io.Writer) error {
	s := &archiveSnapshot{t: t, rep: rep, from: rep.From, end: rep.To.Add(time.Nanosecond),
		dir: filepath.Dir(a.reportFile(rep.ID))}
	err := a.db.View(ctx, func(tx *storage.Tx) error {
		s.asOf = tx.Now()
		cp, err := ledger.LatestCheckpoint(tx.Tx, anchor.Log(t))
		switch {
		case err == nil:
			s.cp = &cp
		case !errors.Is(err, ledger.ErrNotFound):
			return fmt.Errorf("latest checkpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if asOf := s.asOf.Add(time.Nanosecond); asOf.Before(s.end) {
		s.end = asOf
	}

	bw := bufio.NewWriterSize(w, 256<<10)
	z := &archive{zw: zip.NewWriter(bw), modified: s.asOf}
	if err := z.add(archiveReadmeFile, func(w io.Writer) error {
		_, err := io.WriteString(w, archiveReadme)
		return err
	}); err != nil {
		return err
	}
	var counts archiveCounts
	if counts.Polygons, err = a.archivePolygons(ctx, s, z); err != nil {
		return err
	}
	if counts.DDS, err = a.archiveDDS(ctx, s, z); err != nil {
		return err
	}
	led := archiveLedger{KeyName: a.ledger.KeyName(), VerifierKey: a.ledger.VerifierKey()}
	if s.cp != nil {
		root := anchor.Hex(s.cp.Root)
		led.TreeSize, led.RootHash = s.cp.Size, &root
		if err := z.addJSON(archiveCheckpointFile, checkpointResponse{TreeSize: s.cp.Size, RootHash: root, Note: string(s.cp.Note)}); err != nil {
			return err
		}
	}
	if err := z.addJSON(archivePublicKeyFile, publicKeyResponse{KeyName: led.KeyName, VerifierKey: led.VerifierKey}); err != nil {
		return err
	}
	if err := z.addJSON(archiveManifestFile, archiveManifest{Format: archiveFormat, ReportID: rep.ID,
		Organisation: t.Org, Environment: string(t.Env),
		Period: archivePeriod{From: storage.FormatTime(rep.From), To: storage.FormatTime(rep.To)},
		AsOf:   storage.FormatTime(s.asOf), CreatedAt: storage.FormatTime(a.now()), AppVersion: a.version,
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

func newSpool(s *archiveSnapshot) (*spool, error) {
	f, err := os.CreateTemp(s.dir, s.rep.ID+".zip.spool-*")
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
	if err := sp.w.Flush(); err != nil {
		return err
	}
	if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, sp.f)
	return err
}

func (sp *spool) close() {
	sp.f.Close()
	os.Remove(sp.f.Name())
}

// errPageFull stops an iteration when a page is full.
var errPageFull = errors.New("page full")

// archivedPolygon is a polygon as an archive holds it: its feature and
// its evidence with its proof.
type archivedPolygon struct {
	id                string
	feature, evidence []byte
}

// archivePolygons writes polygons.geojson, a FeatureCollection written
// feature by feature, and evidence.jsonl, their evidence in the same order.
// It returns how many polygons it wrote.
func (a *App) archivePolygons(ctx context.Context, s *archiveSnapshot, z *archive) (int, error) {
	ev, err := newSpool(s)
	if err != nil {
		return 0, err
	}
	defer ev.close()
	n := 0
	err = z.add(archivePolygonsFile, func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"type":"FeatureCollection","features":[`); err != nil {
			return err
		}
		for after := ""; ; {
			page, more, err := a.polygonPage(ctx, s, after)
			if err != nil {
				return err
			}
			for _, p := range page {
				sep := ",\n"
				if n == 0 {
					sep = "\n"
				}
				if _, err := io.WriteString(w, sep); err != nil {
					return err
				}
				if _, err := w.Write(p.feature); err != nil {
					return err
				}
				if err := ev.line(p.evidence); err != nil {
					return err
				}
				n++
			}
			if !more {
				break
			}
			after = page[len(page)-1].id
		}
		_, err := io.WriteString(w, "\n]}\n")
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, z.add(archiveEvidenceFile, ev.copyTo)
}

// polygonPage reads the next page of the snapshot's polygons after the one
// with ID after, and whether more follow.
func (a *App) polygonPage(ctx context.Context, s *archiveSnapshot, after string) ([]archivedPolygon, bool, error) {
	var page []archivedPolygon
	more := false
	err := a.db.View(ctx, func(tx *storage.Tx) error {
		size := 0
		err := tx.EachPolygon(s.t, s.from, s.end, after, func(p *storage.Polygon) error {
			if !s.covers(p.LedgerIndex) {
				return nil // anchored after the snapshot's checkpoint
			}
			if len(page) == archivePageItems || size >= archivePageBytes {
				more = true
				return errPageFull
			}
			d, err := tx.FindPolygonDetail(s.t, p.ID)
			if err != nil {
				return fmt.Errorf("polygon %s: %w", p.ID, err)
			}
			feature, err := archiveFeature(d.Feature, p)
			if err != nil {
				return err
			}
			evidence, err := anchor.WithProofAt(tx, s.t, d.Evidence, p.LedgerIndex, s.cp)
			if err != nil {
				return fmt.Errorf("evidence of polygon %s: %w", p.ID, err)
			}
			page = append(page, archivedPolygon{id: p.ID, feature: feature, evidence: evidence})
			size += len(feature) + len(evidence)
			return nil
		})
		if errors.Is(err, errPageFull) {
			return nil
		}
		return err
	})
	return page, more, err
}

// ddsLedgerLine is a line of dds-ledger.jsonl: the ledger entries of a
// statement's history that the snapshot's checkpoint covers.
type ddsLedgerLine struct {
	DDSID   string           `json:"ddsId"`
	Entries []ddsLedgerEntry `json:"entries"`
}

// ddsLedgerEntry is a change of a statement's history, its ledger entry
// (data: the entry's bytes, standard base64) and its inclusion proof.
type ddsLedgerEntry struct {
	Status          string   `json:"status"`
	At              string   `json:"at"`
	Index           int64    `json:"index"`
	TransactionHash string   `json:"transactionHash"`
	Data            string   `json:"data"`
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	Proof           []string `json:"proof"`
}

// archivedDDS is a statement as an archive holds it: its record and its
// dds-ledger.jsonl line.
type archivedDDS struct {
	id             string
	record, ledger []byte
}

// archiveDDS writes dds.jsonl, the statements created in the period, and
// dds-ledger.jsonl, the proofs of their changes in the same order. It
// returns how many statements it wrote.
func (a *App) archiveDDS(ctx context.Context, s *archiveSnapshot, z *archive) (int, error) {
	proofs, err := newSpool(s)
	if err != nil {
		return 0, err
	}
	defer proofs.close()
	n := 0
	err = z.add(archiveDDSFile, func(w io.Writer) error {
		for after := ""; ; {
			page, more, err := a.ddsPage(ctx, s, after)
			if err != nil {
				return err
			}
			for _, d := range page {
				if _, err := w.Write(append(d.record, '\n')); err != nil {
					return err
				}
				if err := proofs.line(d.ledger); err != nil {
					return err
				}
				n++
			}
			if !more {
				return nil
			}
			after = page[len(page)-1].id
		}
	})
	if err != nil {
		return 0, err
	}
	return n, z.add(archiveDDSLedgerFile, proofs.copyTo)
}

// ddsPage reads the next page of the snapshot's statements after the one
// with ID after, and whether more follow.
func (a *App) ddsPage(ctx context.Context, s *archiveSnapshot, after string) ([]archivedDDS, bool, error) {
	var page []archivedDDS
	more := false
	err := a.db.View(ctx, func(tx *storage.Tx) error {
		size := 0
		err := tx.EachDDS(s.t, s.from, s.end, after, func(d *storage.DDS) error {
			if len(page) == archivePageItems || size >= archivePageBytes {
				more = true
				return errPageFull
			}
			view, err := ddsView(tx, s.t, d, true)
			if err != nil {
				return err
			}
			record, err := storage.MarshalJSON(view)
			if err != nil {
				return fmt.Errorf("encode dds %s: %w", d.ID, err)
			}
			line := ddsLedgerLine{DDSID: d.ID, Entries: []ddsLedgerEntry{}}
			for _, c := range d.History {
				if c.LedgerIndex == nil || !s.covers(c.LedgerIndex) {
					continue
				}
				e, err := a.proveArchived(tx, s, *c.LedgerIndex)
				if err != nil {
					return fmt.Errorf("dds %s: %w", d.ID, err)
				}
				e.Status, e.At = c.Status, storage.FormatTime(c.At)
				line.Entries = append(line.Entries, e)
			}
			proof, err := storage.MarshalJSON(line)
			if err != nil {
				return err
			}
			page = append(page, archivedDDS{id: d.ID, record: record, ledger: proof})
			size += len(record) + len(proof)
			return nil
		})
		if errors.Is(err, errPageFull) {
			return nil
		}
		return err
	})
	return page, more, err
}

// proveArchived reads entry index of the tenant's log and proves it in the
// snapshot's checkpoint.
func (a *App) proveArchived(tx *storage.Tx, s *archiveSnapshot, index int64) (ddsLedgerEntry, error) {
	proofs, err := anchor.ProveAt(tx, s.t, *s.cp, []int64{index})
	if err != nil {
		return ddsLedgerEntry{}, err
	}
	e, err := ledger.ReadEntry(tx.Tx, anchor.Log(s.t), index)
	if err != nil {
		return ddsLedgerEntry{}, fmt.Errorf("ledger entry %d: %w", index, err)
	}
	p := proofs[0]
	return ddsLedgerEntry{Index: p.Index, TransactionHash: p.TransactionHash,
		Data: base64.StdEncoding.EncodeToString(e.Data), TreeSize: p.TreeSize, RootHash: p.RootHash, Proof: p.Proof}, nil
}
