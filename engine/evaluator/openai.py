"""An evaluator for any OpenAI-compatible chat-completions endpoint (hosted, vLLM, llama.cpp, Ollama).

The profile wants a probability for yes/no, not a word: asking for one token with its top five
log-probabilities and weighing the yes-like against the no-like first tokens gives one, with
sampling switched off. Choices and rubric levels are constrained answers (one name, one level
number) parsed strictly, with the probability of the answer's tokens as the confidence. Anything
that is not exactly that shape, and any timeout, is an `EvaluatorError`: the verdict logic turns it
into a retry, then an `error` verdict, never a guessed answer.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import httpx
from pydantic import BaseModel, Field, ValidationError

from engine.evaluator.base import Answer, CheckRequest, Choice, EvaluatorError, Level, YesNo
from engine.evaluator.prompt import messages

MAX_REPLY_BYTES = 1 << 20
"""A reply is a few hundred bytes; anything near this is not an answer."""

_YES = frozenset({"yes"})
_NO = frozenset({"no"})
_MARKERS = "\u2581\u0120"
"""Word-start markers some servers leave on raw tokens (SentencePiece `▁`, byte-level BPE `Ġ`)."""


class _Alternative(BaseModel):
    token: str
    logprob: float


class _Token(BaseModel):
    token: str
    logprob: float
    top_logprobs: list[_Alternative] = []


class _Logprobs(BaseModel):
    content: list[_Token] = Field(min_length=1)


class _Message(BaseModel):
    content: str | None = None


class _Choice(BaseModel):
    message: _Message
    logprobs: _Logprobs


class _Reply(BaseModel):
    choices: list[_Choice] = Field(min_length=1)


def _logprob(value: float) -> float:
    """A checked log-probability; a hair above 0 is float noise from the server, clamped."""
    if math.isnan(value) or value > 1e-6:
        raise EvaluatorError(f"log-probability {value!r} is not a log of a probability")
    return min(value, 0.0)


def _word(token: str) -> str:
    return token.strip().lstrip(_MARKERS).strip().lower()


def _yes_probability(first: _Token) -> float:
    """The yes share of the probability mass on yes-like and no-like first tokens."""
    if not first.top_logprobs:
        raise EvaluatorError("the reply has no top log-probabilities")
    yes = no = 0.0
    for alt in first.top_logprobs:
        word = _word(alt.token)
        if word in _YES:
            yes += math.exp(_logprob(alt.logprob))
        elif word in _NO:
            no += math.exp(_logprob(alt.logprob))
    if yes + no == 0.0:
        raise EvaluatorError("neither yes nor no is among the top answers")
    return yes / (yes + no)


def _confidence(choice: _Choice) -> float:
    """The probability of the whole answer: the product of its tokens' probabilities."""
    return math.exp(sum(_logprob(token.logprob) for token in choice.logprobs.content))


def parse_reply(request: CheckRequest, body: Any) -> Answer:
    """The answer in a chat-completions reply, or `EvaluatorError` when it is not exactly one."""
    try:
        choice = _Reply.model_validate(body).choices[0]
    except ValidationError as exc:
        raise EvaluatorError(
            f"malformed reply: {exc.error_count()} problem(s), first at {_where(exc)}"
        ) from exc
    question = request.question
    if question.kind == "yes_no":
        return YesNo(_yes_probability(choice.logprobs.content[0]))
    text = (choice.message.content or "").strip()
    if question.kind == "choice":
        names = [name for name, _ in question.choices]
        if text not in names:
            raise EvaluatorError(f"answer {text[:80]!r} is not one of {', '.join(names)}")
        return Choice(text, _confidence(choice))
    if not (text.isascii() and text.isdigit()) or int(text) >= len(question.levels):
        raise EvaluatorError(f"answer {text[:80]!r} is not a level from 0 to {len(question.levels) - 1}")
    return Level(int(text), _confidence(choice))


def _where(exc: ValidationError) -> str:
    return ".".join(str(part) for part in exc.errors()[0]["loc"]) or "the top"


def _max_tokens(request: CheckRequest) -> int:
    """One token for yes/no and for a level (levels are 0-9); a name gets room for its characters."""
    question = request.question
    if question.kind == "choice":
        return max(len(name) for name, _ in question.choices) + 1
    return 1


class OpenAIEvaluator:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_seconds: float = 30.0,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._timeout = timeout_seconds
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_seconds, headers=headers, transport=transport)

    def payload(self, request: CheckRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages(request),
            "temperature": 0,
            "max_tokens": _max_tokens(request),
            "logprobs": True,
        }
        if request.question.kind == "yes_no":
            body["top_logprobs"] = 5
        return body

    async def answer(self, request: CheckRequest) -> Answer:
        try:
            async with asyncio.timeout(self._timeout):
                body = await self._post(self.payload(request))
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise EvaluatorError(f"no answer within {self._timeout:g}s") from exc
        except httpx.HTTPError as exc:
            raise EvaluatorError(f"request failed: {type(exc).__name__}") from exc
        return parse_reply(request, body)

    async def _post(self, payload: dict[str, Any]) -> Any:
        async with self._client.stream("POST", self._url, json=payload) as response:
            if response.status_code != 200:
                raise EvaluatorError(f"HTTP {response.status_code} from the evaluator")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise EvaluatorError(f"reply larger than {MAX_REPLY_BYTES} bytes")
                chunks.append(chunk)
        try:
            return json.loads(b"".join(chunks))
        except ValueError as exc:
            raise EvaluatorError("reply is not JSON") from exc

    async def aclose(self) -> None:
        await self._client.aclose()
