"""The README and the pages it links (``docs/*.md``) hold together: every relative link reaches a
file, every page is linked from the README, the configuration table names every variable the
bot reads with its default, the policy page names every key of the policy file and shows the
demo policy as it ships, and no page points at a specification or a history a reader does not
have. (The samples on these pages are run by ``tests/test_readme.py``.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot._settings import describe_variables
from bot.policy import Defaults, GatewayPolicy, PolicyFile, Rule

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]

_FENCE = re.compile(r"^ *```.*?^ *```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _prose(page: Path) -> str:
    """The page without its code blocks and inline code (a sample's ``[x](y)`` is no link)."""
    return _CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))


def _relative_links(page: Path) -> list[str]:
    links = _LINK.findall(_prose(page))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_reaches_a_file(page: Path) -> None:
    missing = []
    for link in _relative_links(page):
        target = link.split("#", 1)[0]
        if target and not (page.parent / target).resolve().exists():
            missing.append(link)
    assert not missing, f"{page.name} links to what is not there: {missing}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / link.split("#", 1)[0]).resolve() for link in _relative_links(README)}
    assert DOCS and [p.name for p in DOCS if p.resolve() not in linked] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_cites_a_specification_or_a_history(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"\bSPEC\b[ \d.]*|\bthis round\b|\bround \d+\b|\(before[:,]", text)
    assert found == [], f"{page.name}: {found}"


def _table_rows(page: Path, header: str) -> list[list[str]]:
    """The cells of the rows of the table whose header line starts with ``header``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_the_configuration_table_names_every_variable_with_its_default() -> None:
    rows = _table_rows(ROOT / "docs" / "configuration.md", "| Variable |")
    defaults: dict[str, str] = {}
    for first, default, _ in rows:
        for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", first):
            defaults[name] = default
    variables = describe_variables()
    assert sorted(defaults) == sorted(name for name, _, _ in variables)
    wrong = [
        (name, default, defaults[name])
        for name, default, _ in variables
        if default is not None and f"`{default}`" not in defaults[name]
    ]
    assert wrong == [], "(variable, its default, what the table says)"


def test_the_policy_page_names_every_key_of_the_file() -> None:
    keys: set[str] = set()
    sections: set[str] = set()
    for cells in _table_rows(ROOT / "docs" / "policy.md", "| Key |"):
        name = cells[0].strip("`")
        section = re.fullmatch(r"\[+(\w+)\]+(?:` `| )?(\w+)?", name)
        if section is None:
            keys.add(name)
        else:
            sections.add(section.group(1))
            keys.update(filter(None, [section.group(2)]))
    expected = {*Defaults.model_fields, *Rule.model_fields, *GatewayPolicy.model_fields}
    assert sorted(expected - keys) == []
    assert sorted(set(PolicyFile.model_fields) - {"defaults", "rules"} - sections) == []


def test_the_policy_page_shows_the_demo_policy_as_it_ships() -> None:
    demo = (ROOT / "bot" / "demo" / "countersign.toml").read_text(encoding="utf-8").strip()
    assert f"```toml\n{demo}\n```" in (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
