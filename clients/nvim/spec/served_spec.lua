-- The model that answers is the model shown (issue 40): once the daemon says which model
-- the server answers with (`servedModel`, protocol.md), the winbar and the picker name it,
-- not the one asked for.
local H = require("spec.helpers")

describe("the model shown", function()
  teardown(H.shutdown)

  before_each(function()
    H.setup()
    H.reset()
  end)

  it("the winbar names servedModel once the daemon reports it", function()
    H.turn("!echo hi")
    local s = H.session()
    s:show(nil)
    assert.matches("stub · stub", vim.wo[vim.fn.bufwinid(s.chat:buffer())].winbar, 1, true)
    -- what event/usage carries for a llama.cpp server asked for gpt-4o
    s.info.model = "gpt-4o"
    require("elelem.events").on_notification("event/usage", {
      sessionId = s.id, inputTokens = 10, outputTokens = 2, used = 12, size = 1000,
      servedModel = "SmolLM2-135M-Instruct", compactAt = 0.85,
    })
    local bar = vim.wo[vim.fn.bufwinid(s.chat:buffer())].winbar
    assert.matches("SmolLM2%-135M%-Instruct", bar)
    assert.is_nil(bar:find("gpt-4o", 1, true))
    assert.are.equal("SmolLM2-135M-Instruct", s:model())
  end)
end)
