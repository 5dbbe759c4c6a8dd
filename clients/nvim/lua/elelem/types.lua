---@meta
--- LuaCATS types of elelem.nvim (for lua-language-server; never required at run time).

---@class elelem.ChatConfig
---@field split? "left"|"right"|"above"|"below" where the chat window opens (default "right")
---@field size? number width (left/right) or height (above/below): a fraction of the editor if <= 1, else cells (default 0.4)
---@field input_height? integer height of the prompt area (default 5)

---@class elelem.ThinkingConfig
---@field folded? boolean fold thinking blocks closed (default false: shown dimmed, `zc` folds)

---@class elelem.Config
---@field cmd? string[] daemon command (default { "elelem", "daemon" })
---@field env? table<string, string> extra environment for the daemon
---@field provider? string provider of new sessions (default: the daemon's)
---@field model? string model of new sessions (default: the provider's)
---@field cwd? string|fun(): string working directory of new sessions (default: the tab's cwd)
---@field trust? "ask"|boolean load the project's .agents/plugins? (default "ask": vim.secure)
---@field log_level? "debug"|"info"|"warn"|"error" client log level (default "warn")
---@field chat? elelem.ChatConfig
---@field thinking? elelem.ThinkingConfig
---@field prestart? boolean start the daemon and open a session on VimEnter, deferred (default false)
---@field review? {save?: boolean, keys?: table<string, string>} `save`: write a changed buffer that was clean (default true); keys: accept, reject, accept_all, reject_all, accept_turn, next, prev
---@field mcpServers? table MCP servers for every session: ACP's list or the `{NAME = {...}}` map (protocol.md "MCP servers")
---@field questions? "chat"|"select" where the agent's questions (with options) and the review's hunks are answered: in the chat buffer (default) or vim.ui.select / vim.ui.input
---@field editor_state? boolean send `editor/state` (active file, cursor, visible lines) debounced (default false)
