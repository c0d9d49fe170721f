#!/usr/bin/env bash
# The test command (`npm test`): typecheck, lint, the Node suites, the workerd suite.
# Installs and starts the system components the suites need when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== typecheck"
npm run --silent typecheck
echo "== lint"
npx biome check .
echo "== node tests"
npx vitest run --config vitest.config.ts
if [ -f vitest.workers.config.ts ]; then
  echo "== workerd tests"
  npx vitest run --config vitest.workers.config.ts
fi
