#!/usr/bin/env bash
# pack-test.sh <work dir>: what a user gets from the registry. Packs this checkout (`npm pack`),
# installs the tarball into an empty directory (`npm install <tarball>`, which compiles
# better-sqlite3 as a user's install does: about 70 s on 2 cores), then runs the installed
# command: `npx gateway --version`, `npx gateway serve` zero-config and with a config file (each
# until /healthz answers, then SIGINT and exit 0), `gateway migrate --dry-run` and `gateway
# backup` on the store it wrote, and `npx gateway validate` when the package has that command.
# PACK_TEST_REUSE_BINARY=1 installs with --ignore-scripts and copies this checkout's built
# better_sqlite3.node instead (same Node only: for quick local runs).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:?usage: pack-test.sh <work dir>}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
tarball="$work/$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -1)"
app="$work/app"
rm -rf "$app" && mkdir -p "$app" && cd "$app"
echo '{ "name": "pack-test-app", "private": true }' >package.json
if [ "${PACK_TEST_REUSE_BINARY:-}" = 1 ]; then
  npm install --prefer-offline --no-audit --no-fund --ignore-scripts "$tarball" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
  mkdir -p node_modules/better-sqlite3/build/Release
  cp "$root/node_modules/better-sqlite3/build/Release/better_sqlite3.node" node_modules/better-sqlite3/build/Release/
else
  npm install --prefer-offline --no-audit --no-fund "$tarball" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
fi
version="$(npx --no-install gateway --version)"
expected="$(node -p 'require(process.argv[1]).version' "$root/package.json")"
[ "$version" = "$expected" ] || { echo "gateway --version printed '$version', expected $expected" >&2; exit 1; }
echo "installed gateway $version from $(basename "$tarball")"

# A free loopback port whose next port is free too (the zero-config emulators take port + 1).
free_port() {
  node -e '
    const net = require("net");
    const bind = (port) => new Promise((ok) => { const s = net.createServer().once("error", () => ok(null)).listen(port, "127.0.0.1", () => ok(s)); });
    (async () => {
      for (let i = 0; i < 50; i++) {
        const a = await bind(0);
        const port = a.address().port;
        const b = port < 65535 ? await bind(port + 1) : null;
        a.close(); b?.close();
        if (b) return console.log(port);
      }
      process.exit(1);
    })();'
}

# serve_until_healthy <label> <args...>: starts `npx gateway serve <args>`, waits for /healthz, stops it.
serve_until_healthy() {
  local label="$1" port="$2"
  shift 2
  # Its own process group: the SIGINT below reaches npx and the gateway, as Ctrl-C in a terminal does.
  setsid npx --no-install gateway serve --port "$port" "$@" >"$work/$label.log" 2>&1 &
  local pid=$!
  local ok=""
  for _ in $(seq 1 240); do
    if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then ok=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ -z "$ok" ]; then
    kill -- "-$pid" 2>/dev/null || true
    cat "$work/$label.log" >&2
    echo "gateway serve ($label) did not answer /healthz" >&2
    exit 1
  fi
  kill -INT -- "-$pid"
  local code=0
  wait "$pid" || code=$?
  # npx reports a child stopped by Ctrl-C as 130; the gateway's own log says whether it stopped cleanly.
  if { [ "$code" != 0 ] && [ "$code" != 130 ]; } || ! grep -q '"msg":"shutting down"' "$work/$label.log" ||
    grep -q '"msg":"shutdown failed"' "$work/$label.log"; then
    cat "$work/$label.log" >&2
    echo "gateway serve ($label) did not stop cleanly (exit $code)" >&2
    exit 1
  fi
  echo "gateway serve ($label): answered /healthz, stopped cleanly"
}

serve_until_healthy zero-config "$(free_port)"

cat >gateway.json <<'JSON'
{
  "server": { "host": "127.0.0.1" },
  "store": { "driver": "sqlite", "dir": "./data" },
  "sources": [{ "id": "esign", "service": "esign", "secrets": ["${ESIGN_WEBHOOK_SECRET}"] }]
}
JSON
export ESIGN_WEBHOOK_SECRET="pack-test-secret-0123456789"
serve_until_healthy with-config "$(free_port)" --config gateway.json
npx --no-install gateway migrate --config gateway.json --dry-run
npx --no-install gateway backup --config gateway.json --to "$work/backup.db"
if npx --no-install gateway --help 2>&1 | grep -qE '^\s+validate\b'; then
  npx --no-install gateway validate --config gateway.json
else
  echo "gateway validate: not in this package yet, skipped"
fi
