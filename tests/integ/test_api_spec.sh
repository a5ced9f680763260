#!/bin/bash
# docs/api.yaml is a valid OpenAPI 3 description: linted by @redocly/cli,
# installed from the npm registry into this test's own directory.
# Skipped (77) without npm or without the registry.
. "$(dirname "$0")/lib.sh"
command -v npm >/dev/null || { echo "skip: no npm"; exit 77; }
if ! timeout "$(tscale 300)" npm install --prefix "$T/npm" --no-audit --no-fund \
	--loglevel=error @redocly/cli >"$T/npm.log" 2>&1; then
	echo "skip: @redocly/cli cannot be installed (no registry?)"; tail -3 "$T/npm.log"; exit 77
fi
out=$("$T/npm/node_modules/.bin/redocly" lint "$ROOT/docs/api.yaml" 2>&1) &&
	ok "redocly lint docs/api.yaml: valid" || fail "redocly lint: $out"
# The linter must be able to fail: a copy with a broken reference.
sed 's|#/components/schemas/Status|#/components/schemas/Nope|' "$ROOT/docs/api.yaml" >"$T/bad.yaml"
"$T/npm/node_modules/.bin/redocly" lint "$T/bad.yaml" >/dev/null 2>&1 &&
	fail "redocly accepts a broken reference" || ok "redocly refuses a broken reference"
# Each path the server answers is described.
for p in /v1/status /v1/services /v1/services/{name} /v1/nodes /v1/nodes/{id} /v1/weights \
	/v1/weights/{key} /v1/export /v1/log /v1/apply /v1/metrics /v1/run /v1/cutovers /v1/cutovers/{id} \
	/v1/rollback/{change} /v1/releases /v1/releases/{service} \
	/v1/releases/{service}/{action} /v1/budgets /v1/budgets/{provider} \
	/v1/steer/{service} /v1/steer/{service}/unpin /v1/explain /v1/health; do
	grep -q "^  $p:" "$ROOT/docs/api.yaml" && ok "described: $p" || fail "not described: $p"
done
finish
