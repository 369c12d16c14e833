"""What a failed model call means for ``LiteLLMClient``: whether the provider answered, whether the
call may succeed if sent again and when, and whether its request can be sent at all (a local fault:
never retried, never reported as the provider's)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from reyn_core.host import describe_exception, describe_lone_surrogate, lone_surrogate_at


def got_response(exc: Exception) -> bool:
    """Whether the provider answered at all (litellm invents a status for local failures such as a
    missing key or a refused connection; those carry no response headers)."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        return bool(headers)
    except Exception:
        return False


BODY_KEYS = ("messages", "tools", "tool_choice", "response_format")


def unsendable(kwargs: Mapping[str, Any]) -> str | None:
    """Why the request body cannot be made (None when it can): it is JSON written as UTF-8, as the
    HTTP client will write it (no NaN or Infinity: httpx refuses them too). Made here first, a request
    that cannot leave this machine fails at once, saying what is wrong — litellm reported the same
    fault as the provider's ("no response") and it was retried. Text UTF-8 cannot carry is named by
    its JSON pointer."""
    body = {key: kwargs[key] for key in BODY_KEYS if key in kwargs}
    try:
        json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        found = lone_surrogate_at(body)
        where = describe_lone_surrogate(found) if found is not None else "in the request"
        return f"it holds text UTF-8 cannot carry (a lone surrogate) {where}"
    except (TypeError, ValueError) as exc:  # a value JSON has no form for, or one holding itself
        return f"it is not JSON data ({describe_exception(exc, 200)})"
    return None


def retryable(exc: Exception) -> bool:
    """Whether a failed call may succeed if sent again: no answer, 408, 409, 429 or 5xx."""
    status = getattr(exc, "status_code", None) if got_response(exc) else None
    return not isinstance(status, int) or status in (408, 409, 429) or status >= 500


def retry_delay(exc: Exception, attempt: int) -> float:
    """Seconds before retry ``attempt``: the provider's ``retry-after-ms`` / ``retry-after`` when it
    sent one (at most 60 s), else exponential backoff from 0.5 s, at most 8 s."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(
        getattr(exc, "response", None), "headers", None
    )
    try:
        if headers and headers.get("retry-after-ms") is not None:
            return min(60.0, max(0.0, float(headers["retry-after-ms"]) / 1000))
        if headers and headers.get("retry-after") is not None:
            return min(60.0, max(0.0, float(headers["retry-after"])))
    except (TypeError, ValueError):
        pass
    return min(8.0, 0.5 * 2 ** (attempt - 1))


__all__ = ["got_response", "retry_delay", "retryable", "unsendable"]
