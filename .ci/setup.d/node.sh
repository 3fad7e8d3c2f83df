#!/usr/bin/env bash
# The TextMate grammar's test (tests/test_textmate.py) tokenizes the example specs
# with vscode-textmate and vscode-oniguruma from the npm registry, as VS Code does.
# They are installed outside the checkout (CI tests a fresh clone), in
# ${CTDSL_NODE_MODULES:-$HOME/.cache/ctdsl-node}/node_modules, where the test looks.
# Where npm is missing this says so and exits 0: the test then skips with a reason.
set -uo pipefail
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "note: node or npm not found; the TextMate grammar test will skip"
  exit 0
fi
prefix="${CTDSL_NODE_MODULES:-$HOME/.cache/ctdsl-node}"
mkdir -p "$prefix"
cp editors/vscode/test/package.json "$prefix/package.json"
if ! (cd "$prefix" && npm install --no-audit --no-fund --loglevel=error >/dev/null); then
  echo "note: npm install failed; the TextMate grammar test will skip"
fi
exit 0
