#!/usr/bin/env bash
# The test command (`npm test`): typecheck, lint, the Node suites, the workerd suite.
# Installs the system components the suites need when they are missing (as root, via apt-get);
# the suites start and stop their own instances on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."

# ensure_installed <command> <debian package>
ensure_installed() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "== installing $2"
  if [ "$(id -u)" -ne 0 ]; then
    echo "$1 is missing and this is not root: run apt-get install -y $2" >&2
    exit 1
  fi
  local log
  log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2"; } >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
  rm -f "$log"
}

echo "== typecheck"
npm run --silent typecheck
echo "== lint"
npx biome check .
ensure_installed redis-server redis-server # queue sink tests
ensure_installed chromium chromium         # the live stream's browser test (playwright-core)
ensure_installed curl curl                 # the docs' shell recipes (test/docs)
ensure_installed pg_ctlcluster postgresql  # the postgres drivers' tests (binaries in /usr/lib/postgresql/*/bin)

# TEST_REPORTS_DIR keeps the JSON reports (e.g. to regenerate test/file-durations.json from a quiet
# full run: node --import tsx test/helpers/file-durations.ts "$TEST_REPORTS_DIR/node.json").
if [ -n "${TEST_REPORTS_DIR:-}" ]; then
  reports="$TEST_REPORTS_DIR"
  mkdir -p "$reports"
else
  reports="$(mktemp -d)"
  trap 'rm -rf "$reports"' EXIT
fi
# One run: the Node suite, and (project "h3-webhooks", TEST_BOTH_WEBHOOK_PATHS=1, see vitest.config.ts)
# the ingress suites again with webhooks through h3 (the fast path off: both paths must pass them),
# all on the same two workers, the longest files first (test/helpers/longest-first-sequencer.ts).
echo "== node tests (and the ingress suites again with webhooks through h3)"
TEST_BOTH_WEBHOOK_PATHS=1 npx vitest run --config vitest.config.ts --reporter=default --reporter=json \
  --outputFile.json="$reports/node.json"
echo "== workerd tests"
npx vitest run --config vitest.workers.config.ts --reporter=default --reporter=json --outputFile.json="$reports/workerd.json"

node -e '
  let passed = 0, failed = 0;
  for (const file of process.argv.slice(1)) {
    const r = JSON.parse(require("fs").readFileSync(file, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests;
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (passed === 0 || failed > 0) process.exit(1);
' "$reports/node.json" "$reports/workerd.json"
