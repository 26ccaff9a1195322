#!/usr/bin/env bash
# The real language servers the tests and the benchmark run against, installed from PyPI and npm
# into target/lsp-servers (idempotent): pylsp with pyflakes in a virtual environment, and
# typescript-language-server with typescript. The tests find them there (or where
# FLOWER_LSP_SERVERS points) and fail, naming this script, when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${FLOWER_LSP_SERVERS:-target/lsp-servers}"
mkdir -p "$dir"
if [ ! -x "$dir/venv/bin/pylsp" ]; then
  python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install --quiet --disable-pip-version-check \
    'python-lsp-server[pyflakes]==1.15.0'
fi
if [ ! -x "$dir/node/node_modules/.bin/typescript-language-server" ]; then
  mkdir -p "$dir/node"
  (cd "$dir/node" && npm install --no-audit --no-fund --silent \
    typescript-language-server@5.3.0 typescript@5.9.3)
fi
