"""JSON-RPC plumbing shared by both editor faces, the Python client and the bench:
framing (`Content-Length`), NDJSON lines, the shapes of a JSON-RPC message, one
`RpcError` and one table of error codes. Nothing here knows a session."""
