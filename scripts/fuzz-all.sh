#!/usr/bin/env bash
# Fuzzes every listener with the OpenAPI fuzzer in ../shared/tools/fuzz (a checkout of the shared tools beside
# this repository; install it once with `npm ci` in that folder): starts a fake chat-completions upstream for
# guard, bootstraps geo and engine keys and a runtime token, runs `keel start` on a fresh data dir (or on
# DATABASE_URL/REDIS_URL when set) and prints one FUZZ line per listener. The listeners use GUARD_PORT, GEO_PORT,
# ENGINE_PORT, ENGINE_MCP_PORT and ENGINE_WEBHOOK_PORT when set (default 8081–8085). FUZZ_DIR points at another
# copy of the fuzzer (one where `npm ci` has been run) instead of ../shared/tools/fuzz.
#   scripts/fuzz-all.sh            PER_OP=200 SEED=7 GUARD_PORT=9401 … scripts/fuzz-all.sh
set -u
cd "$(dirname "$0")/.."
FUZZ_DIR=${FUZZ_DIR:-../shared/tools/fuzz}
if [ ! -f "$FUZZ_DIR/fuzz.mjs" ]; then
  echo "fuzz-all: $FUZZ_DIR/fuzz.mjs not found (the shared tools must be checked out beside this repository, or set FUZZ_DIR)" >&2
  exit 1
fi
if [ ! -d "$FUZZ_DIR/node_modules" ]; then
  echo "fuzz-all: run \`npm ci\` in $FUZZ_DIR first (the fuzzer's own dependencies)" >&2
  exit 1
fi
export GUARD_PORT=${GUARD_PORT:-8081} GEO_PORT=${GEO_PORT:-8082} ENGINE_PORT=${ENGINE_PORT:-8083}
export ENGINE_MCP_PORT=${ENGINE_MCP_PORT:-8084} ENGINE_WEBHOOK_PORT=${ENGINE_WEBHOOK_PORT:-8085}
D=$(mktemp -d /tmp/keel-fuzz-XXXX)
export KEEL_DATA_DIR=$D RATE_LIMIT_MAX=100000000 LOG_LEVEL=warn KEEL_ALLOW_PRIVATE_URLS=true
KEEL="node packages/cli/src/keel.ts"
setsid npx node bench/guard-gateway-upstream.ts > $D/up.log 2>&1 &
UP=$!
sleep 3
UPURL=$(grep -o 'http://[^ ]*' $D/up.log | head -1)
echo "upstream $UPURL"
GEO=$(npx $KEEL geo bootstrap --json)
ENG=$(npx $KEEL engine bootstrap --json)
AI_MODEL_URL=$UPURL setsid npx $KEEL start > $D/keel.log 2>&1 &
K=$!
for _ in $(seq 1 120); do grep -q "keel: ready" $D/keel.log && break; sleep 1; done
if ! grep -q "ready" $D/keel.log; then
  echo "keel start did not come up (ports $GUARD_PORT, $GEO_PORT, $ENGINE_PORT, $ENGINE_MCP_PORT, $ENGINE_WEBHOOK_PORT taken?):"; cat $D/keel.log; kill -- -$K -$UP 2>/dev/null; exit 1
fi
GEOKEY=$(echo "$GEO" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).keys.admin))")
MKEY=$(echo "$ENG" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).keys.merchant))")
AK=$(echo "$ENG" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const j=JSON.parse(s);console.log(j.accessKey)})")
SK=$(echo "$ENG" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const j=JSON.parse(s);console.log(j.secretKey)})")
TOKEN=$(curl -s localhost:$ENGINE_PORT/api/v1/auth/token -H 'content-type: application/json' -d "{\"access_key\":\"$AK\",\"secret_key\":\"$SK\"}" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).access_token))")
F="node $FUZZ_DIR/fuzz.mjs --per-op ${PER_OP:-60} --seed ${SEED:-1}"
echo "== guard"; $F --base http://127.0.0.1:$GUARD_PORT 2>&1 | tail -${TAILN:-3}
echo "== geo"; $F --base http://127.0.0.1:$GEO_PORT --header "authorization: Bearer $GEOKEY" 2>&1 | tail -${TAILN:-3}
# The engine REST listener's whole document is over the fuzzer's 256 KiB read limit: fuzz it area by area
# (`<prefix>/openapi.json`, REST_OPENAPI_PARTS in packages/engine/src/app.ts).
for part in /api/v1/catalog /catalog /api; do
  echo "== engine REST $part (merchant key)"; $F --base http://127.0.0.1:$ENGINE_PORT$part --header "authorization: Bearer $MKEY" 2>&1 | tail -${TAILN:-3}
done
for part in /api/v1/runtime /api; do
  echo "== engine REST $part (runtime token)"; $F --base http://127.0.0.1:$ENGINE_PORT$part --header "authorization: Bearer $TOKEN" 2>&1 | tail -${TAILN:-3}
done
echo "== engine MCP"; $F --base http://127.0.0.1:$ENGINE_MCP_PORT --header "authorization: Bearer $MKEY" 2>&1 | tail -${TAILN:-3}
echo "== engine ingress"; $F --base http://127.0.0.1:$ENGINE_WEBHOOK_PORT --header "authorization: Bearer $MKEY" 2>&1 | tail -${TAILN:-3}
# setsid made each a process group: signal the group (npx, its shell and node), not only npx.
kill -INT -- -$K; sleep 3; kill -- -$UP
grep -i '"level":50\|"level":60\|error' $D/keel.log | head -5
rm -rf $D
