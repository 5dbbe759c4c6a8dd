"""Providers translate between the agent's messages and a model API's wire format.

A provider has `name`, `model` and `fetch(messages, tools)`, an async iterator of
events: `{"type": "saying", "text"}`, `{"type": "thinking", "text"}` and
`{"type": "doing", "id", "name", "arguments"}` (plus `error` when the call's
arguments could not be parsed). It may also yield `{"type": "usage", ...counts}`
and `{"type": "keep", "data": {...}}`, whose data the agent stores on this round's
assistant message so the provider can send it back (Anthropic's thinking blocks).
"""
