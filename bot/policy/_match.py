"""The policy file's rules compiled once for matching (SPEC 11: thousands of rules, a call
matched in well under a millisecond).

Matching used to try every rule in file order with ``fnmatch.fnmatchcase``, which compiles
each glob it sees and keeps the last 32,768: a file with more globs than that (20,000 rules of
two globs) recompiled every one of them on every call, about a second per call, and a card asks
a few times (gating, the card, each click); with fewer globs every call still tested every glob
(22 ms for 20,000 rules). Here each glob is compiled at start-up, once (the same glob in many
rules, once in all), into the cheapest test that is exactly ``fnmatchcase``:

- a glob without ``*``, ``?`` or ``[`` is a name: rules are indexed by it in a dict;
- every other glob is indexed by its literal prefix (the text before its first wildcard), or
  when it starts with one, by its literal suffix: a call's candidates are the rules under each
  prefix and suffix of its names (a dict look-up per character); ``prefix*`` and ``*suffix``
  need no further test, the rest a regex from ``fnmatch.translate``;
- only globs with neither (``*``, ``*delete*``) are tried on every call.

Candidates are tried in file order (their indices, merged), so the first rule in the file that
matches the call (tools, then agents, then ``args_above``, then ``args_match``) wins, exactly as
a linear scan would. Each ``args_match`` pattern is compiled once too, and searched in the
argument's text (a string as it is, any other value as its JSON; a missing one never matches).

Example:
    >>> rules = CompiledRules((Rule(tools=("delete-*",)), Rule(tools=("refund",))))
    >>> rules.first("refund", "refund", "ops/billing", {})
    1
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import translate
from typing import Any

from bot.policy._file import Rule
from bot.policy._toml_words import gc_paused

Test = Callable[[str], bool]
"""Whether a name matches one glob."""

_MAGIC = re.compile(r"[*?\[]")
_SUFFIX = re.compile(r"[^*?\[\]]*\Z")
"""The literal end of a glob: what follows its last ``*``, ``?``, ``[`` or ``]``."""


@dataclass(frozen=True, kw_only=True)
class _Compiled:
    """One rule, ready to test against a call whose tool it may match."""

    agents: tuple[Test, ...] | None
    """Tests of the rule's agent-path globs; None: any agent."""
    args_above: tuple[tuple[str, int | float], ...]
    """``(argument, limit)`` pairs, all of which must hold."""
    args_match: tuple[tuple[str, re.Pattern[str]], ...] = ()
    """``(argument, pattern)`` pairs, all of which must find a match in the argument's text."""


_ANY = _Compiled(agents=None, args_above=())
"""A rule that any call of its tools matches."""


class _Globs:
    """Each distinct glob compiled once."""

    def __init__(self) -> None:
        self._tests: dict[str, Test] = {}

    def test(self, glob: str) -> Test:
        found = self._tests.get(glob)
        if found is None:
            found = self._tests[glob] = _compile(glob)
        return found


class CompiledRules:
    """A policy's rules indexed by tool glob; ``first`` is the index of the first rule in file
    order that matches a call, as ``fnmatchcase`` over every rule would find it."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        with gc_paused():
            self._compile(rules)

    def _compile(self, rules: Sequence[Rule]) -> None:
        globs = _Globs()
        patterns: dict[str, re.Pattern[str]] = {}  # the same pattern in many rules: once
        self._rules = tuple(
            _ANY
            if r.agents is None and not r.args_above and not r.args_match
            else _Compiled(
                agents=None if r.agents is None else tuple(globs.test(g) for g in r.agents),
                args_above=tuple((r.args_above or {}).items()),
                args_match=tuple(
                    (key, patterns.get(text) or patterns.setdefault(text, re.compile(text)))
                    for key, text in (r.args_match or {}).items()
                ),
            )
            for r in rules
        )
        self._names: dict[str, list[int]] = {}
        self._prefixes: dict[str, list[tuple[int, Test | None]]] = {}
        self._suffixes: dict[str, list[tuple[int, Test | None]]] = {}
        self._anywhere: list[tuple[int, Test | None]] = []
        for index, rule in enumerate(rules):
            for glob in dict.fromkeys(rule.tools):  # in order, each once
                self._index(index, glob, globs)
        self._longest_prefix = max(map(len, self._prefixes), default=0)
        self._longest_suffix = max(map(len, self._suffixes), default=0)

    def _index(self, index: int, glob: str, globs: _Globs) -> None:
        """File rule ``index`` under the literal part of one of its tool globs."""
        magic = _MAGIC.search(glob)
        if magic is None:
            self._names.setdefault(glob, []).append(index)
            return
        prefix = glob[: magic.start()]
        suffix = _SUFFIX.search(glob).group()  # type: ignore[union-attr]  # always matches
        if prefix:
            whole = glob == f"{prefix}*"  # the index alone decides
            self._prefixes.setdefault(prefix, []).append(
                (index, None if whole else globs.test(glob))
            )
        elif suffix:
            whole = glob == f"*{suffix}"
            self._suffixes.setdefault(suffix, []).append(
                (index, None if whole else globs.test(glob))
            )
        else:
            self._anywhere.append((index, None if glob == "*" else globs.test(glob)))

    def first(self, tool_name: str, tool_id: str, path: str, args: dict[str, Any]) -> int | None:
        """The 0-based index of the first rule matching the call; None when none does."""
        last = -1
        for index in heapq.merge(*self._by_tool(tool_name, tool_id)):
            if index == last:
                continue  # matched by both names, or by two of the rule's globs
            last = index
            rule = self._rules[index]
            if rule.agents is not None and not any(test(path) for test in rule.agents):
                continue
            if not all(_above(args.get(key), limit) for key, limit in rule.args_above):
                continue
            if all(_matches(args, key, pattern) for key, pattern in rule.args_match):
                return index
        return None

    def _by_tool(self, tool_name: str, tool_id: str) -> list[Iterator[int]]:
        """Ascending rule indices whose tool globs match either name, one iterator per index
        list."""
        names = (tool_name,) if tool_id == tool_name else (tool_name, tool_id)
        found: list[Iterator[int]] = []
        for name in names:
            exact = self._names.get(name)
            if exact is not None:
                found.append(iter(exact))
            for end in range(1, min(len(name), self._longest_prefix) + 1):
                entries = self._prefixes.get(name[:end])
                if entries is not None:
                    found.append(_passing(entries, name))
            for start in range(max(len(name) - self._longest_suffix, 0), len(name)):
                entries = self._suffixes.get(name[start:])
                if entries is not None:
                    found.append(_passing(entries, name))
            if self._anywhere:
                found.append(_passing(self._anywhere, name))
        return found


def _passing(entries: list[tuple[int, Test | None]], name: str) -> Iterator[int]:
    """The indices of ``entries`` (ascending) whose glob matches ``name``."""
    return (index for index, test in entries if test is None or test(name))


def _compile(glob: str) -> Test:
    """The cheapest exact equivalent of ``fnmatchcase(name, glob)``."""
    magic = _MAGIC.search(glob)
    if magic is None:
        return glob.__eq__
    prefix = glob[: magic.start()]
    if glob[magic.start() :] == "*":
        return lambda name: name.startswith(prefix)
    return _regex_test(re.compile(translate(glob)))


def _regex_test(pattern: re.Pattern[str]) -> Test:
    return lambda name: pattern.match(name) is not None


def _above(value: Any, limit: int | float) -> bool:
    """True when ``value`` is a number above ``limit``; a value that is not a number (or a
    numeric string that does not parse) counts as above: fail safe. Whole numbers compare
    exactly (one too big for a float is still a number)."""
    if value is None:
        return False
    if isinstance(value, int):
        return value > limit
    try:
        return float(value) > limit
    except (TypeError, ValueError, OverflowError):
        return True


def _matches(args: dict[str, Any], key: str, pattern: re.Pattern[str]) -> bool:
    """True when argument ``key`` is there and its text holds a match of ``pattern``."""
    if key not in args:
        return False
    value = args[key]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return pattern.search(text) is not None
