"""Rendering a conversation with the model's own chat template (from GGUF metadata).

The template is the Jinja2 string in ``tokenizer.chat_template``, rendered the way
Hugging Face Transformers and llama-cpp-python's ``Jinja2ChatFormatter`` do: a sandboxed
environment, ``trim_blocks``/``lstrip_blocks``, loop controls, ``{% generation %}`` tags
ignored, and ``raise_exception``/``strftime_now`` available to the template.

``extends_previous_turn`` checks the property prefix reuse depends on: the prompt of turn
N followed by the reply is a prefix of the prompt of turn N+1. Templates that rewrite
earlier assistant turns (e.g. strip reasoning) break it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NoReturn

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

from shellagent.errors import InputError, ModelUnavailable
from shellagent.model.backend import Message

__all__ = ["CHATML_TEMPLATE", "ChatTemplate"]

# Used when a GGUF carries no template: the format most small instruct models use.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class _IgnoreGenerationTags(jinja2.ext.Extension):
    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> list[jinja2.nodes.Node]:
        parser.stream.skip(1)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise_exception(message: str) -> NoReturn:
    raise InputError(f"the model's chat template refused the conversation: {message}")


class ChatTemplate:
    """A compiled chat template with the model's BOS/EOS token strings."""

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = "") -> None:
        env = ImmutableSandboxedEnvironment(
            loader=jinja2.BaseLoader(),
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[_IgnoreGenerationTags, jinja2.ext.loopcontrols],
        )
        env.filters["tojson"] = _tojson
        try:
            self._template = env.from_string(source)
        except jinja2.TemplateError as exc:
            raise ModelUnavailable(
                f"the model's chat template does not compile: {exc}",
                hint="use a GGUF with a valid tokenizer.chat_template",
            ) from None
        self.source = source
        self.bos_token = bos_token
        self.eos_token = eos_token

    def render(self, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
        try:
            return self._template.render(
                messages=list(messages),
                bos_token=self.bos_token,
                eos_token=self.eos_token,
                add_generation_prompt=add_generation_prompt,
                raise_exception=_raise_exception,
                strftime_now=lambda fmt: datetime.now().strftime(fmt),
            )
        except jinja2.TemplateError as exc:
            raise InputError(
                f"the model's chat template failed on this conversation: {exc}"
            ) from None

    def extends_previous_turn(self) -> bool:
        """Whether turn N's prompt plus its reply is a text prefix of turn N+1's prompt."""
        first: list[Message] = [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "U1"},
        ]
        reply = '{"cmd": "true", "why": "w"}'
        second = [
            *first,
            {"role": "assistant", "content": reply},
            {"role": "user", "content": "U2"},
        ]
        try:
            before = self.render(first) + reply
            after = self.render(second)
        except InputError:
            return False
        return after.startswith(before)
