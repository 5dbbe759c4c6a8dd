"""The built-in plugins. Each registers through the same `register(plugin)` door
that `.agents/plugins/*.py` files use."""
