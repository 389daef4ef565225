package apitest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The EU's schemas of the services' request bodies (release 8.2.1), in
// server/euis/testdata/eu-schemas.
const (
	DDSSchema    = "EUDRDueDiligenceStatementServiceV3/xsd4-due-diligence-statement-v3.xsd"
	VerifySchema = "EUDRVerifyDeclarationServiceV3/xsd3-verify-declaration-v3.xsd"
	SDSchema     = "EUDRSimplifiedDeclarationServiceV3/xsd4-simplified-declaration-v3.xsd"
	// BodySchema declares the BodyIdentity header (body/v3).
	BodySchema = "EUDRSimplifiedDeclarationServiceV3/xsd2-body-v3.xsd"
)

// euSchemas is the folder of the EU schemas and their catalog, found from
// this file's place in the source tree (tests run in their package's
// folder, which differs).
func euSchemas() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "euis", "testdata", "eu-schemas")
}

// requireXMLLint returns the path of xmllint (Debian's libxml2-utils), or
// skips the test without it; under CI, where .ci/run installs what the
// tests need, a missing xmllint fails it.
func requireXMLLint(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint (libxml2-utils) is needed to check SOAP bodies against the EU schemas")
		}
		t.Skip("xmllint (libxml2-utils) not installed: SOAP bodies not checked against the EU schemas")
	}
	return p
}

// SOAPBody returns the element inside the Body of a SOAP envelope as a
// document of its own: its text as sent, with the namespace declarations
// of the Envelope and Body it relied on written onto it.
func SOAPBody(t testing.TB, envelope []byte) []byte {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(envelope))
	var inherited []xml.Attr
	depth, inBody := 0, false
	for {
		start := d.InputOffset()
		tok, err := d.RawToken()
		if err == io.EOF {
			t.Fatal("no element in the SOAP Body")
		}
		if err != nil {
			t.Fatalf("envelope: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			if inBody {
				for open := 1; open > 0; {
					tok, err := d.RawToken()
					if err != nil {
						t.Fatalf("envelope: %v", err)
					}
					switch tok.(type) {
					case xml.StartElement:
						open++
					case xml.EndElement:
						open--
					}
				}
				elem := string(envelope[start:d.InputOffset()])
				name := "<" + el.Name.Local
				if el.Name.Space != "" {
					name = "<" + el.Name.Space + ":" + el.Name.Local
				}
				var decls strings.Builder
				for _, a := range inherited {
					decls.WriteString(" " + a.Name.Space + ":" + a.Name.Local + `="` + a.Value + `"`)
				}
				return []byte(strings.Replace(elem, name, name+decls.String(), 1))
			}
			for _, a := range el.Attr {
				if a.Name.Space == "xmlns" {
					inherited = append(inherited, a)
				}
			}
			if el.Name.Local == "Body" && depth == 2 {
				inBody = true
			}
		case xml.EndElement:
			depth--
		}
	}
}

// CheckEUSchema validates the body of a SOAP request against the EU
// schema of its service (DDSSchema, VerifySchema, ...), with xmllint,
// offline: the catalog maps the schemas' import URLs to the local copies.
// A body the schema refuses fails the test with xmllint's reasons.
func CheckEUSchema(t testing.TB, schema string, envelope []byte) {
	t.Helper()
	if err := ValidateEUSchema(t, schema, SOAPBody(t, envelope)); err != nil {
		t.Errorf("%v\nbody: %s", err, SOAPBody(t, envelope))
	}
}

// ValidateEUSchema validates the document body against schema and returns
// xmllint's complaint, or nil.
func ValidateEUSchema(t testing.TB, schema string, body []byte) error {
	t.Helper()
	xmllint := requireXMLLint(t)
	file := filepath.Join(t.TempDir(), "body.xml")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(xmllint, "--nonet", "--noout", "--schema", filepath.Join(euSchemas(), schema), file)
	cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+filepath.Join(euSchemas(), "catalog.xml"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the body breaks %s: %v\n%s", filepath.Base(schema), err, out)
	}
	return nil
}
