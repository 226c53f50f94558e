"""The guide pages say what is true now, and every table of the results page says how to measure it again.

The guide pages (``docs/*.md`` other than ``experiments.md``, and README.md) hold no diary: no "last
stop" / "this stop" / "next stop", no commit hash (a word of 7 to 40 hex digits with a digit and a
letter in it, such as ``5607b7b``: a hex colour's ``#`` or a longer run such as a sha256 is not
one), no internal issue number ("#42", "issue 42"), and no dated history ("until 2026-12-06",
"before 2026-12-06"). The history is in git; the experiment record is ``docs/experiments.md``.

The results page (docs/results.md): each section (a ``##`` or ``###`` heading and what follows it
down to the next such heading) that holds a table also holds the command that measures it again: a
code span or a line of a fenced block that starts with ``bigtwo `` or ``python`` (a console
block's ``$ `` prompt allowed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "experiments.md")]

DIARY_STOP = re.compile(r"\b(?:last|this|next|previous|that) stop\b", re.I)
# 7-40 hex digits standing alone (not after '#', a word character, '-', '/' or '.', nor before one),
# with at least one digit and one letter: '5607b7b', `a3f14c3`, 'git show a3f14c3:...'
HEX_WORD = re.compile(r"(?<![#\w\-/.])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w\-/])")
ISSUE = re.compile(r"(?:(?<![\w&`#])#\d+\b|\bissues? (?:#|no\.? ?)?\d+\b|\bPR ?#?\d+\b)", re.I)
DATED_HISTORY = re.compile(r"\b(?:until|till|before)\s+(?:\d{4}-\d{2}-\d{2}|\d{4}-\d{2}\b)", re.I)
CODE_SPAN = re.compile(r"`[^`]+`")  # a code span may break across lines
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def diary_problems(text: str) -> list[str]:
    """What in a guide page's Markdown reads as a diary: each hit as 'kind: text'."""
    found = [f"diary stop: {m.group(0)}" for m in DIARY_STOP.finditer(text)]
    found += [f"commit hash: {m.group(0)}" for m in HEX_WORD.finditer(text)]
    prose = CODE_SPAN.sub("", FENCE.sub("", text))  # '`#2` on a repeat' in a code span is a name, not an issue
    found += [f"issue number: {m.group(0)}" for m in ISSUE.finditer(prose)]
    found += [f"dated history: {m.group(0)}" for m in DATED_HISTORY.finditer(text)]
    return found


def _sections(text: str) -> list[tuple[str, str]]:
    """Each ``##`` or ``###`` heading with its body, down to the next such heading (fences respected)."""
    sections: list[tuple[str, list[str]]] = [("(top)", [])]
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{2,3} ", line):
            sections.append((line, []))
        else:
            sections[-1][1].append(line)
    return [(head, "\n".join(body)) for head, body in sections]


def _has_table(body: str) -> bool:
    return re.search(r"^\|.*\|\s*\n\|[ :|-]*-[ :|-]*\|\s*$", body, flags=re.M) is not None


def _has_command(body: str) -> bool:
    spans = [s.strip("`") for s in CODE_SPAN.findall(FENCE.sub("", body))]
    lines = [line.removeprefix("$ ") for block in FENCE.findall(body) for line in block.splitlines()[1:]]
    return any(s.startswith(("bigtwo ", "python")) for s in spans + lines)


def tables_without_command(text: str) -> list[str]:
    """The headings of the results page's sections that hold a table but no command to measure it again."""
    return [head for head, body in _sections(text) if _has_table(body) and not _has_command(body)]


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_guide_pages_hold_no_diary(page: Path) -> None:
    problems = diary_problems(page.read_text(encoding="utf-8"))
    assert not problems, (
        f"{page.relative_to(ROOT)}: {problems} (the record goes to docs/experiments.md, history to git)"
    )


def test_every_results_table_gives_its_command() -> None:
    missing = tables_without_command((ROOT / "docs" / "results.md").read_text(encoding="utf-8"))
    assert not missing, f"docs/results.md: sections with a table and no `bigtwo ...`/`python ...` command: {missing}"


def test_results_page_links_the_experiment_record() -> None:
    assert "experiments.md" in (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert "experiments.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("snippet", "kinds"),
    [
        ("The code of the last stop measured 31.8 ms.", ["diary stop"]),
        ("From a worktree of commit 5607b7b the runs started.", ["commit hash"]),
        ("`git show a3f14c3:agents/pretrained/hong-kong.pt > old.pt`", ["commit hash"]),
        ("the measured `0ef8cb8` code", ["commit hash"]),
        ("As #42 asked, and issue 17 too.", ["issue number", "issue number"]),
        ("`samples=16` (the default until 2026-12-06)", ["dated history"]),
        ("the figures before 2026-12 were slower", ["dated history"]),
        # good: normal words and numbers, hex colours, anchors, names with '#', dates that are not a history
        (
            "A decade of facades; 1234567 steps; colour #1e90ff and #ffffff; a sha256 "
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            [],
        ),
        ("[results](results.md#budget-default); `random#2` on a repeat; measured 2026-12-06; it stops early", []),
        ("## How strong { #strong }\nThe run stopped at its limit; the bus stop is not a diary.", []),
    ],
)
def test_the_diary_check_flags_bad_snippets_only(snippet: str, kinds: list[str]) -> None:
    assert [p.split(":")[0] for p in diary_problems(snippet)] == kinds


@pytest.mark.parametrize(
    ("page", "missing"),
    [
        ("## Speed\n\n| what | env-steps/s |\n|---|---|\n| vector | 1.9M |\n", ["## Speed"]),
        ("## Speed\n\n`bigtwo bench --repeats 5`:\n\n| what | env-steps/s |\n|---|---|\n| vector | 1.9M |\n", []),
        ("## Ray\n\n```console\n$ python -m benchmarks.ray_bench\n```\n\n| a | b |\n|---:|---|\n| 1 | 2 |\n", []),
        ("## A\n\n`bigtwo bench`\n\n### B\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", ["### B"]),
        ("## Prose only\n\nNo table, no command.\n", []),
    ],
)
def test_the_results_check_flags_a_table_without_its_command(page: str, missing: list[str]) -> None:
    assert tables_without_command(page) == missing
