"""One real request that says whether a provider's settings work: `elelem login`'s check.

Each provider's cheapest authenticated read: Anthropic's and OpenAI's `GET /models`
(with the key), an OpenAI-compatible server's `GET {base}/models` (with the key if one
was given), Ollama's `GET /api/version`. `check` returns None when the server said yes,
else one line saying what went wrong, in the words the user can act on. A key is never
part of that line.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from .anthropic import DEFAULT_BASE_URL as ANTHROPIC_URL
from .ollama import DEFAULT_HOST as OLLAMA_HOST
from .openai import DEFAULT_BASE_URL as OPENAI_URL

TIMEOUT = 15.0


def request(provider: str, values: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The URL and headers of the check for these settings."""
    if provider == "anthropic":
        base = (values.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL).rstrip("/")
        headers = {
            "x-api-key": values.get("ANTHROPIC_API_KEY", ""),
            "anthropic-version": "2023-06-01",
        }
        return f"{base}/v1/models", headers
    if provider == "openai":
        base = (values.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        key = values.get("OPENAI_API_KEY")
        return f"{base}/models", {"authorization": f"Bearer {key}"} if key else {}
    if provider == "ollama":
        host = (values.get("OLLAMA_HOST") or OLLAMA_HOST).rstrip("/")
        host = host if "://" in host else f"http://{host}"
        return f"{host}/api/version", {}
    raise ValueError(f"no check for provider {provider!r}")


def check(provider: str, values: Mapping[str, str], timeout: float = TIMEOUT) -> str | None:
    url, headers = request(provider, values)
    if not url.startswith(("http://", "https://")):
        return f"{url} is not an http:// or https:// address"
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return f"no answer from {url}: {type(exc).__name__}: {exc}"
    except ValueError as exc:  # a malformed URL
        return f"cannot use {url}: {exc}"
    if response.status_code in (401, 403):
        return f"{url} refused the key ({response.status_code})"
    if response.status_code != 200:
        return f"{url} answered {response.status_code}"
    return None
