package euis_test

import (
	"bytes"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// TestCheckEUSchema: the check refuses what the schema refuses (or it
// would pass anything), and finds the body of an envelope whose
// namespaces are declared above it.
func TestCheckEUSchema(t *testing.T) {
	envelope := []byte(`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"` +
		` xmlns:dds="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"><S:Header/><S:Body>` +
		`<dds:WithdrawDdsRequest><dds:uuid>%s</dds:uuid></dds:WithdrawDdsRequest></S:Body></S:Envelope>`)
	good := bytes.Replace(envelope, []byte("%s"), []byte("3f2504e0-4f89-11d3-9a0c-0305e82c3301"), 1)
	apitest.CheckEUSchema(t, apitest.DDSSchema, good)

	bad := bytes.Replace(envelope, []byte("%s"), []byte("not a uuid"), 1)
	if err := apitest.ValidateEUSchema(t, apitest.DDSSchema, apitest.SOAPBody(t, bad)); err == nil {
		t.Error("a uuid that is none passed the schema")
	}
}
