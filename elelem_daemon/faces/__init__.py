"""The faces: each adapts the core's sessions to one transport. `terminal` (the REPL,
`elelem chat` / `ask`), `daemon` (JSON-RPC with `Content-Length` framing on pygls, for
our editor clients) and `acp` (the Agent Client Protocol). A face never imports another."""
