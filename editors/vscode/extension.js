// Starts `ctdsl lsp` (the command in the setting ctdsl.server.command) for .ct files.
// The highlighting needs none of this: it is the grammar in syntaxes/.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("ctdsl").get("server.command", ["ctdsl", "lsp"]);
  if (!Array.isArray(command) || command.length === 0) {
    return;
  }
  const server = { command: command[0], args: command.slice(1) };
  client = new LanguageClient(
    "ctdsl",
    "ctdsl language server",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "ct" }, { scheme: "untitled", language: "ct" }] }
  );
  context.subscriptions.push(client);
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
