"""How deep a JSON body may nest, checked on its raw text before anything parses it.

``json.loads`` recurses once per level: a signed Slack body or an ``/api`` body nesting 5,000
levels deep raised ``RecursionError`` inside the parser (bolt's: an HTTP 500 with a traceback).
``too_deep`` walks the text once, without recursion and without building anything, so such a
body is refused with 400 before it is parsed. Slack's own bodies nest about a dozen levels
(a view's state, a message's rich text); tool arguments a few more.

Example:
    >>> too_deep('{"a": [[1]]}', limit=2)
    True
    >>> too_deep('{"a": "[[[[[["}', limit=2)
    False
"""

from __future__ import annotations

import re

SLACK_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays a Slack body may have (Slack's nest a dozen)."""
API_JSON_DEPTH = 512
"""The deepest an ``/api`` body may nest (tool arguments and resume data are the caller's;
the parser itself gives up near 1,000)."""

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def too_deep(text: str, *, limit: int) -> bool:
    """Whether the JSON ``text`` opens more than ``limit`` objects / arrays inside each other
    (brackets inside strings do not count). Malformed text is left to the parser."""
    depth = 0
    for match in _BRACKETS.finditer(_STRINGS.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False
