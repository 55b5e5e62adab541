"""Which provider errors a retry can escape, and which stop the run at once."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gtog._errors import FatalRunError

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.config import ModelConfig

__all__ = [
    "PERMANENT_ERRORS",
    "TRANSIENT_ERRORS",
    "ModelFatalError",
    "as_fatal",
    "fatal_in",
    "fatal_reason",
    "transient",
    "with_transient_retries",
]

TRANSIENT_ERRORS = (
    "RateLimitError",  # 429
    "InternalServerError",  # 500
    "BadGatewayError",  # 502
    "ServiceUnavailableError",  # 503
    "Timeout",  # 408, 504, a request that timed out
    "APIConnectionError",  # a dropped or refused connection
)
"""LiteLLM's names for the errors a later attempt can escape: these are retried."""

PERMANENT_ERRORS = (
    "BadRequestError",
    "UnsupportedParamsError",
    "ContextWindowExceededError",
    "ContentPolicyViolationError",
    "ImageFetchError",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "UnprocessableEntityError",
    "APIError",
    "APIResponseValidationError",
    "BudgetExceededError",
)
"""graphrag_llm's default `exceptions_to_skip` without the transient errors: these fail at
the first attempt (401/403/404 then stop the run, see `fatal_reason`)."""

_FATAL_STATUS = {
    401: "the key was refused: check api_key (or the environment variable it names)",
    403: "the key may not use this model: check the key's permissions or the model",
    404: "the model or endpoint does not exist: check model and api_base",
}


_GOOGLE_STATUS = {
    "API_KEY_INVALID": 401,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
}
"""Google's error reasons and statuses (a Gemini error body's `details[].reason` and
`status`) that retrying cannot fix, as the HTTP status they mean. LiteLLM maps Gemini's
`400 API_KEY_INVALID` to an AuthenticationError but its `403 PERMISSION_DENIED` to a
BadRequestError, so the body decides."""

_CLIENT_ERRORS = {
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
}


def _google_reason(text: str) -> str | None:
    """The first of Google's fatal reasons or statuses quoted in an error's text."""
    found = re.findall(r'"(?:reason|status)"\s*:\s*"([A-Z_]+)"', text)
    return next((r for r in found if r in _GOOGLE_STATUS), None)


def _answered(exc: BaseException, status: int) -> str:
    """What the server answered: its own status and Google's reason when the error body
    names them (`400 API_KEY_INVALID`), else `status`."""
    text = str(exc)
    reason = _google_reason(text)
    if reason is None:
        return str(status)
    code = re.search(r'"code"\s*:\s*(\d{3})', text)
    return f"{code.group(1) if code else status} {reason}"


class ModelFatalError(FatalRunError):
    """A provider error that stops the run: the key, the permission or the model is wrong."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def fatal_reason(exc: BaseException) -> int | None:
    """The HTTP status of an error that retrying cannot fix (401, 403, 404), else None."""
    if isinstance(exc, ModelFatalError):
        return exc.status
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    if name in _CLIENT_ERRORS:
        reason = _google_reason(str(exc))
        if reason is not None:
            return _GOOGLE_STATUS[reason]
    by_name = {"AuthenticationError": 401, "PermissionDeniedError": 403, "NotFoundError": 404}
    if name in by_name:
        return by_name[name]
    return status if status in _FATAL_STATUS else None


def as_fatal(exc: BaseException, model_id: str | None, config: ModelConfig) -> BaseException:
    """`exc` as a `ModelFatalError` naming the model when it is fatal, else `exc` itself.

    Every provider's errors come through here (OpenAI's 401, Azure's 401, Gemini's 400
    `API_KEY_INVALID`, ...): one line naming the model id (when known), provider, model and
    `api_base`, what the server answered and what to check.
    """
    status = fatal_reason(exc)
    if status is None or isinstance(exc, ModelFatalError):
        return exc
    where = f" at {config.api_base}" if config.api_base else ""
    named = f"model {model_id!r} ({config.model_provider}/{config.model}{where})"
    if model_id is None:
        named = f"model {config.model_provider}/{config.model}{where}"
    return ModelFatalError(
        f"{named} answered {_answered(exc, status)}: {_FATAL_STATUS[status]}", status
    )


def fatal_in(exc: BaseException) -> BaseException | None:
    """The first fatal provider error in `exc`, its causes and (for an exception group)
    its members, else None."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if fatal_reason(current) is not None:
            return current
        todo.extend(getattr(current, "exceptions", ()) or ())
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def transient(config: ModelConfig) -> ModelConfig:
    """`config` whose retry (if any) also retries transient errors, unless it names its own
    (and, like every retry in gtog, waits the delay a server states: `gtog.llm._retry`)."""
    from gtog.llm._retry import register_retries

    register_retries()
    retry = config.retry
    if retry is None or "exceptions_to_skip" in (retry.model_extra or {}):
        return config
    retry = retry.model_copy(update={"exceptions_to_skip": list(PERMANENT_ERRORS)})
    return config.model_copy(update={"retry": retry})


def with_transient_retries(config: GraphRagConfig) -> GraphRagConfig:
    """Every model of `config` retrying 429, 500, 502, 503, 504, timeouts and dropped
    connections with its configured backoff (graphrag_llm's default skips 503 and dropped
    connections); a retry block that names `exceptions_to_skip` is left as it is.

    Done through graphrag_llm's own retry (`exceptions_to_skip`): no second retry loop.
    Changes `config`'s model tables in place and returns `config`.
    """
    for models in (config.completion_models, config.embedding_models):
        for model_id, model in list(models.items()):
            models[model_id] = transient(model)
    return config
