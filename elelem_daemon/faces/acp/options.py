"""The session's config options (ACP's `configOptions`): what the client can pick.

`mode`, `provider` and `model` are `select` options (ACP 1.21's `value_id` form);
`auto_compact` is a `boolean` one (compaction ahead of the window, ELELEM_COMPACT_AT:
context/compaction.py), offered only to a client that takes booleans
(`clientCapabilities.session.configOptions.boolean`) and settable by any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...jsonrpc.errors import invalid_params

if TYPE_CHECKING:
    from ...session import Session

AUTO_COMPACT = "auto_compact"
SELECTS = ("mode", "provider", "model")


def config_options(session: Session, booleans: bool = False) -> list[dict[str, Any]]:
    providers = session.registry.provider_names()
    if session.provider_name not in providers:
        providers.append(session.provider_name)
    model = session.model or "default"
    models = [model] + [m for m in getattr(session.provider, "models", None) or [] if m != model]
    modes = session.modes
    listed: list[dict[str, Any]] = [
        {
            "id": "mode",
            "name": "Mode",
            "description": "What the agent may do: build, plan, review, verify, ...",
            "category": "mode",  # avante's mode picker
            "type": "select",
            "currentValue": modes.current.id,
            "options": [
                {"value": m.id, "name": m.name or m.id, "description": m.description}
                for m in modes.available()
            ],
        },
        {
            "id": "provider",
            "name": "Provider",
            "description": "Who runs the model",
            "category": "model_config",
            "type": "select",
            "currentValue": session.provider_name,
            "options": [{"value": name, "name": name} for name in providers],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": model,
            "options": [{"value": m, "name": shown(session, m)} for m in models],
        },
    ]
    if booleans:
        listed.append(
            {
                "id": AUTO_COMPACT,
                "name": "Auto-compact",
                "description": "Summarise the history before the context window fills "
                "(ELELEM_COMPACT_AT)",
                "type": "boolean",
                "currentValue": session.agent.auto_compact,
            }
        )
    return listed


def shown(session: Session, model: str) -> str:
    """A model's name in the picker: the current one names the model that answers when
    that is another (a local server serves its own, whatever was asked for)."""
    answering = session.answering
    if model == (session.model or "default") and answering and answering != session.model:
        return f"{answering} (asked for {model})"
    return model


def set_option(session: Session, params: dict[str, Any]) -> str:
    """Apply `session/set_config_option`'s value; the option's id. A select option's
    value is a string, a boolean one's `type: "boolean"` and a boolean; anything else,
    or an unknown id, is invalid params. The mode's listener sends its own updates."""
    option, value = params.get("configId"), params.get("value")
    if not isinstance(option, str):
        raise invalid_params("configId: not a string")
    boolean = params.get("type") == "boolean" or isinstance(value, bool)
    if option == AUTO_COMPACT:
        if not isinstance(value, bool):
            raise invalid_params(f"value: {option} is a boolean option")
        session.agent.auto_compact = value
        return option
    if option not in SELECTS:
        raise invalid_params(
            f"configId: unknown option: {option[:80]}. Options: mode, provider, model, "
            f"{AUTO_COMPACT}"
        )
    if boolean:
        raise invalid_params(f"value: {option} is a select option, not a boolean")
    if not isinstance(value, str):
        raise invalid_params("value: not a string")
    if option == "mode":
        session.modes.set(value)
    elif option == "provider":
        session.switch(value, None)
    else:
        session.switch(None, value)
    return option
