"""The daemon face: `elelem daemon`, JSON-RPC over stdio for the VS Code and Neovim
clients (protocol.md)."""
