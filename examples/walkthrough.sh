#!/usr/bin/env bash
# The eudr walk-through: a plot from screening to a filed due-diligence statement, in the
# sandbox of a running appliance (`make run` in another terminal).
#
# Needs only bash, curl and jq. It stops at the first error and prints the appliance's
# answer; it waits for each job instead of assuming it is done; it can be run again and
# again against the same appliance (each run uses references of its own).
#
# Settings (environment variables):
#   EUDR_URL             the sandbox listener (default http://127.0.0.1:8081)
#   EUDR_DATA_DIR        the appliance's data dir, for initial-admin-password (default ./data)
#   EUDR_ADMIN_PASSWORD  the admin password, when the data dir has no initial-admin-password
#   EUDR_WAIT            how many seconds to wait for each job at most (default 120)
#   EUDR_BIN             the eudr binary, to watch the webhooks with `eudr webhooks listen`
#                        (default bin/eudr, as `make run` builds it, else eudr on the PATH;
#                        without one the script goes on without webhooks)
set -euo pipefail

URL=${EUDR_URL:-http://127.0.0.1:8081}
DATA_DIR=${EUDR_DATA_DIR:-data}
WAIT=${EUDR_WAIT:-120}
API=$URL/api/v1/enterprise/eudr

for tool in curl jq; do
	command -v "$tool" >/dev/null || { echo "walkthrough.sh needs $tool: install it first" >&2; exit 1; }
done

EUDR_BIN=${EUDR_BIN:-$(dirname "$0")/../bin/eudr}
[[ -x $EUDR_BIN ]] || EUDR_BIN=$(command -v eudr || true)

# Each run's references and Idempotency-Keys are its own, so the script can run again.
RUN=$(date -u +%Y%m%d%H%M%S)-$$

step() { printf '\n== %s\n' "$*"; }

# call METHOD URL [curl arguments...] prints the answer's body, or, for an answer that is
# not 2xx, prints the status and the error envelope on stderr and stops the script.
call() {
	local method=$1 url=$2 out status body
	shift 2
	out=$(curl -sS -X "$method" -w '\n%{http_code}' "$url" "$@") ||
		{ echo "$method $url: no answer (is the appliance running? make run)" >&2; exit 1; }
	status=${out##*$'\n'}
	body=${out%$'\n'*}
	if [[ $status != 2* ]]; then
		echo "$method $url: HTTP $status" >&2
		jq . <<<"$body" >&2 2>/dev/null || echo "$body" >&2
		exit 1
	fi
	printf '%s\n' "$body"
}

# key calls the sandbox API with the API key; post sends a JSON body with an Idempotency-Key.
key() { call "$1" "$API$2" -H "X-API-Key: $KEY" "${@:3}"; }
post() { key POST "$1" -H 'Content-Type: application/json' -H "Idempotency-Key: $RUN-$2" --data-binary "$3"; }

# wait_job JOB waits until the job is COMPLETED and prints it; a FAILED job stops the script.
wait_job() {
	local job status i
	for ((i = 0; i < WAIT; i++)); do
		job=$(key GET "/jobs/$1")
		status=$(jq -r .status <<<"$job")
		case $status in
		COMPLETED) printf '%s\n' "$job"; return ;;
		FAILED) echo "job $1 failed:" >&2; jq .error <<<"$job" >&2; exit 1 ;;
		esac
		sleep 1
	done
	echo "job $1 is still $status after ${WAIT}s (EUDR_WAIT)" >&2
	exit 1
}

step "1. Log in as admin for a token (key management takes a login token, not an API key)"
if [[ -f $DATA_DIR/initial-admin-password ]]; then
	PASSWORD=$(<"$DATA_DIR/initial-admin-password")
elif [[ -n ${EUDR_ADMIN_PASSWORD:-} ]]; then
	PASSWORD=$EUDR_ADMIN_PASSWORD
else
	echo "no $DATA_DIR/initial-admin-password: set EUDR_DATA_DIR, or EUDR_ADMIN_PASSWORD to the admin password" >&2
	exit 1
fi
# A wrong password answers 401 with the detail INVALID_CREDENTIALS, which call prints.
TOKEN=$(call POST "$URL/api/v1/enterprise/auth/login" -H 'Content-Type: application/json' \
	--data-binary "$(jq -n --arg p "$PASSWORD" '{username: "admin", password: $p}')" | jq -r .token)

step "2. Create a sandbox API key (its value is shown only in this answer)"
KEY=$(call POST "$URL/api/v1/enterprise/api-keys" -H "Authorization: Bearer $TOKEN" \
	-H 'Content-Type: application/json' -H "Idempotency-Key: $RUN-key" \
	--data-binary '{"name":"walkthrough","environment":"sandbox","scopes":["read","write"]}' | jq -r .key)
echo "key ${KEY:0:12}..."

step "3. Watch the webhooks: eudr webhooks listen receives, verifies and prints each delivery"
# It gets a certificate from the sandbox's development CA, so it needs no openssl, and
# subscribes to every event type; it deletes its subscription when it is stopped.
LISTEN_DIR=$(mktemp -d)
LISTEN_PID=""
stop_listening() {
	if [[ -n $LISTEN_PID ]]; then
		kill -INT "$LISTEN_PID" 2>/dev/null || true
		wait "$LISTEN_PID" || echo "eudr webhooks listen: $(tail -1 "$LISTEN_DIR/listen.log")" >&2
		LISTEN_PID=""
	fi
	rm -rf "$LISTEN_DIR"
}
trap stop_listening EXIT
if [[ -n $EUDR_BIN ]]; then
	"$EUDR_BIN" webhooks listen --url "$URL" --api-key "$KEY" --json \
		>"$LISTEN_DIR/deliveries.jsonl" 2>"$LISTEN_DIR/listen.log" &
	LISTEN_PID=$!
	for ((i = 0; i < WAIT * 10; i++)); do
		grep -q '^Ready:' "$LISTEN_DIR/listen.log" && break
		kill -0 "$LISTEN_PID" 2>/dev/null || { cat "$LISTEN_DIR/listen.log" >&2; exit 1; }
		sleep 0.1
	done
	grep '^Ready:' "$LISTEN_DIR/listen.log" || { echo "eudr webhooks listen is not ready after ${WAIT}s" >&2; exit 1; }
else
	echo "no eudr binary (make build, or set EUDR_BIN): going on without webhooks"
fi

step "4. Health of the sandbox listener"
key GET /health | jq -c '{status, environment, version}'

step "5. Map an ERP vendor to its EU operator (an upsert by erpVendorId)"
OPERATOR=3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b
post /suppliers vendor '{"erpVendorId":"100234","euOperatorUuid":"'$OPERATOR'",
  "name":"Cooperative Agricole du Sud","country":"CI","eori":"NL123456789","role":"OPERATOR"}' |
	jq -c '{erpVendorId, euOperatorUuid, name}'

step "6. Push two plots to be screened: F-1 lies in the sandbox's deforestation fixture, F-2 does not"
JOB=$(post /polygons plots '{"type":"FeatureCollection","features":[
  {"type":"Feature","properties":{"commodity":"cocoa","producerCountry":"BR","externalId":"F-1","supplierId":"100234"},
   "geometry":{"type":"Polygon","coordinates":[[[-61.501000,-10.501000],[-61.499000,-10.501000],
     [-61.499000,-10.499000],[-61.501000,-10.499000],[-61.501000,-10.501000]]]}},
  {"type":"Feature","properties":{"commodity":"cocoa","producerCountry":"CI","externalId":"F-2","supplierId":"100234","area":2.5},
   "geometry":{"type":"Point","coordinates":[-5.551234,6.821234]}}]}' | jq -r .jobId)
echo "job $JOB"

step "7. Wait for the screening: each feature gets a polygonId and a verdict"
wait_job "$JOB" | jq -c '.results[] | {externalId, polygonId, eudrStatus, failureReason}'
PLOT=$(key GET "/jobs/$JOB" | jq -r '.results[] | select(.externalId == "F-2") | .polygonId')

step "8. Register a batch of cocoa beans (HS 1801, in Annex I) from the compliant plot F-2"
BATCH_ACCEPTED=$(post /batches batch '{"batchReference":"LOT-'$RUN'","commodity":"cocoa","hsCode":"18010000",
  "supplierId":"100234","polygonIds":["'$PLOT'"],"quantity":{"netMassKg":12500},
  "harvestStart":"2026-03-01","harvestEnd":"2026-05-31"}')
BATCH=$(jq -r .batchId <<<"$BATCH_ACCEPTED")
wait_job "$(jq -r .jobId <<<"$BATCH_ACCEPTED")" >/dev/null

step "9. The batch's risk assessment: each factor with its score (Cote d'Ivoire is standard risk)"
key GET "/batches/$BATCH" | jq -c '{batchId, status, riskScore, riskLevel}'
key GET "/batches/$BATCH/risk-assessment" | jq -c '.factors[] | {name, score}'

step "10. Lock the batch to a shipment; the link is anchored in the ledger under a signed checkpoint"
SHIPMENT=SHP-$RUN
LINK=$(post /shipments/link link '{"batchId":"'$BATCH'","shipmentId":"'$SHIPMENT'",
  "containerNumbers":["CSQU3054383"],"portOfEntry":"NLRTM"}')
wait_job "$(jq -r .jobId <<<"$LINK")" >/dev/null
key GET "/shipments/$SHIPMENT" | jq -c '{shipmentId, status, transactionHash, ledgerIndex}'

step "11. The plot's evidence, with its ledger entry and proof: any client can check it"
EVIDENCE=$(key GET "/polygons/$PLOT/evidence")
key POST /evidence/verify -H 'Content-Type: application/json' --data-binary "$EVIDENCE" |
	jq -c '{valid, ledgerIndex, steps}'

step "12. Draft the due-diligence statement and file it to the sandbox's simulated EU system"
DDS=$(post /declarations/dds dds '{"batchIds":["'$BATCH'"],"activityType":"IMPORT","operatorUuid":"'$OPERATOR'"}' |
	jq -r .ddsId)
SUBMIT=$(key POST "/declarations/dds/$DDS/submit" -H "Idempotency-Key: $RUN-submit")
wait_job "$(jq -r .jobId <<<"$SUBMIT")" >/dev/null
# The simulated EU system validates a statement a few seconds after it was submitted.
for ((i = 0; i < WAIT; i++)); do
	STATUS=$(key GET "/declarations/dds/$DDS" | jq -r .status)
	[[ $STATUS == SUBMITTED ]] || break
	sleep 1
done
key GET "/declarations/dds/$DDS" |
	jq -c '{ddsId, status, referenceNumber, verificationNumber, history: [.history[].status]}'
if [[ $STATUS != VALIDATED ]]; then
	echo "the statement is $STATUS, not VALIDATED" >&2
	exit 1
fi

step "13. Revoke it (irreversible: a second revoke is 409 DDS_NOT_REVOCABLE)"
key POST "/declarations/dds/$DDS/revoke" -H "Idempotency-Key: $RUN-revoke" | jq -c '{ddsId, status}'

if [[ -n $LISTEN_PID ]]; then
	step "14. The webhooks of the walk-through, each verified by eudr webhooks listen"
	# Deliveries come at least once and in no set order: wait for the last one expected.
	for ((i = 0; i < WAIT; i++)); do
		grep -q '"eventType":"dds.validated"' "$LISTEN_DIR/deliveries.jsonl" && break
		sleep 1
	done
	jq -c '{eventType, eventId, verified}' "$LISTEN_DIR/deliveries.jsonl"
	stop_listening
fi

printf '\nDone: plot %s, batch %s, shipment %s, statement %s.\n' "$PLOT" "$BATCH" "$SHIPMENT" "$DDS"
