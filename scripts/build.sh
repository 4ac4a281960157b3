#!/usr/bin/env bash
# The one build, run by CI's install step (.ci/run) and by the Dockerfile's build stage, so the image is
# built exactly as CI builds: install every dependency from the lockfile, then `npm pack`, whose
# `prepack` compiles dist/ (npm run build). The tarball (msv3-gateway-<version>.tgz, its name printed
# last) holds what a production install needs (package.json "files"); see docs/operating.md.
#
# Usage: scripts/build.sh [PACK_DIR]   (default: .scratch/pack)
# It replaces node_modules/ (npm ci): run it in a fresh checkout or a build container.
set -euo pipefail
cd "$(dirname "$0")/.."
pack_dir=${1:-.scratch/pack}
mkdir -p "$pack_dir"

npm ci --no-audit --no-fund
npm pack --pack-destination "$pack_dir"
