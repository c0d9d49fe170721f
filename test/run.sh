#!/usr/bin/env bash
# The test command (`npm test`): typecheck, lint, the Node suites, the workerd suite.
# Installs and starts the system components the suites need when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== typecheck"
npm run --silent typecheck
echo "== lint"
npx biome check .
# redis-server for the queue sink tests (they start and stop their own instances on free ports).
if ! command -v redis-server >/dev/null 2>&1; then
  echo "== installing redis-server"
  if [ "$(id -u)" -ne 0 ]; then
    echo "redis-server is missing and this is not root: run apt-get install -y redis-server" >&2
    exit 1
  fi
  install_log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; } >"$install_log" 2>&1; then
    cat "$install_log" >&2
    exit 1
  fi
  rm -f "$install_log"
fi
# Debian's Chromium for the browser test of the live stream (test/browser, via playwright-core).
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing chromium"
  if [ "$(id -u)" -ne 0 ]; then
    echo "chromium is missing and this is not root: run apt-get install -y chromium" >&2
    exit 1
  fi
  install_log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$install_log" 2>&1; then
    cat "$install_log" >&2
    exit 1
  fi
  rm -f "$install_log"
fi
echo "== node tests"
npx vitest run --config vitest.config.ts
if [ -f vitest.workers.config.ts ]; then
  echo "== workerd tests"
  npx vitest run --config vitest.workers.config.ts
fi
