"""Prompts are data: one file per prompt here, loaded by name and rendered into chat messages.

A prompt file starts with a ``vars:`` line naming the variables it takes, then sections
headed ``--- system ---`` and ``--- user ---``. Variables are written ``{name}``; braces
that are not a listed variable are left alone, so JSON examples need no escaping. Every
variable is filled in one pass, so a value that itself holds ``{name}`` (a claim, a web page,
a model's text) is kept word for word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

_SECTION = re.compile(r"^--- (system|user) ---$", flags=re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    name: str
    variables: tuple[str, ...]
    system: str
    user: str

    def render(self, **values: object) -> list[BaseMessage]:
        """The chat messages with every variable filled; a missing or unknown one is a bug."""
        missing = set(self.variables) - set(values)
        unknown = set(values) - set(self.variables)
        if missing or unknown:
            raise TypeError(f"prompt {self.name}: missing {sorted(missing)}, unknown {sorted(unknown)}")
        return [SystemMessage(content=self._fill(self.system, values)), HumanMessage(content=self._fill(self.user, values))]

    def _fill(self, template: str, values: dict[str, object]) -> str:
        if not self.variables:
            return template.strip()
        return _placeholders(self.variables).sub(lambda found: str(values[found.group(1)]), template).strip()


@cache
def _placeholders(variables: tuple[str, ...]) -> re.Pattern[str]:
    """``{name}`` for any of ``variables``, matched in one scan of the template."""
    return re.compile("{(" + "|".join(map(re.escape, variables)) + ")}")


@cache
def load_prompt(name: str, package: str | None = None) -> Prompt:
    """The shared prompt in ``pipelines/prompts/NAME.md``, or with ``package`` (a protocol's, passing its ``__package__``)
    its own in ``pipelines/protocols/PROTOCOL/prompts/NAME.md``."""
    folder = resources.files(package).joinpath("prompts") if package else resources.files(__package__)
    text = folder.joinpath(f"{name}.md").read_text(encoding="utf-8")
    header, _, body = text.partition("\n")
    if not header.startswith("vars:"):
        raise ValueError(f"prompt {name}: first line must be 'vars: a, b'")
    variables = tuple(v.strip() for v in header[5:].split(",") if v.strip())
    parts = _SECTION.split(body)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    return Prompt(name=name, variables=variables, system=sections.get("system", ""), user=sections.get("user", ""))
