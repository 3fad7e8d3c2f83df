// Tokenizes .ct files with the TextMate grammar, as VS Code does (vscode-textmate with
// the Oniguruma regular expressions of vscode-oniguruma), and prints the tokens as JSON:
//   { "FILE": [[line, start, end, [scope, ...]], ...], ... }
// Usage: node tokenize.js GRAMMAR.json FILE...   (tests/test_textmate.py drives it)
"use strict";
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

async function main() {
  const [grammarPath, ...files] = process.argv.slice(2);
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === "source.ct" ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), path.resolve(grammarPath)) : null,
  });
  const grammar = await registry.loadGrammar("source.ct");
  const out = {};
  for (const file of files) {
    const lines = fs.readFileSync(file, "utf8").split(/\r?\n/);
    let stack = vsctm.INITIAL;
    const tokens = [];
    lines.forEach((line, n) => {
      const r = grammar.tokenizeLine(line, stack);
      for (const t of r.tokens) {
        tokens.push([n, t.startIndex, Math.min(t.endIndex, line.length), t.scopes]);
      }
      stack = r.ruleStack;
    });
    out[file] = tokens;
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + "\n");
  process.exit(1);
});
