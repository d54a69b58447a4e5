"""A policy rule in words a card shows, and the key a standing grant is bound to.

``rule_text``: the rule's ``description``, else its tools and conditions ("delete-* when
amount is above 1,000"). ``rule_key``: the rule's number and a digest of everything it says,
so a grant made under it applies only while the file says the same thing at the same place.

Example:
    >>> rule_text(Rule(tools=("refund",), args_above={"amount": 1000}))
    'refund when amount is above 1,000'
"""

from __future__ import annotations

import hashlib

from bot.policy._file import Rule


def rule_text(rule: Rule) -> str:
    """What ``rule`` is about, for people."""
    if rule.description:
        return rule.description
    text = ", ".join(rule.tools)
    if rule.agents:
        text += f" of {', '.join(rule.agents)}"
    if rule.args_above:
        above = [f"{name} is above {_number(limit)}" for name, limit in rule.args_above.items()]
        text += " when " + " and ".join(above)
    return text


def rule_key(number: int, rule: Rule) -> str:
    """``rule-<number>@<digest>``: stable while rule ``number`` says the same."""
    said = rule.model_dump_json(exclude_defaults=True)
    return f"rule-{number}@{hashlib.sha256(said.encode()).hexdigest()[:16]}"


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"
