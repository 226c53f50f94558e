"""The docs site builds with ``mkdocs build --strict`` and its generated pages hold what the code declares.

A broken link, a missing page or a docstring reference mkdocstrings cannot resolve fails the
strict build. The generated parts (docs/hooks.py) are checked against their sources: every
``observation.LAYOUT`` part with its index range, every training config field, every named
variant's action count, one API section per module. The README's links into ``docs/`` must
resolve, and the extras table of the getting-started page must name every extra pyproject.toml
declares. In Chromium at 1280 x 800 (the browser the web table's tests drive) no code block of
any built page is cut off: long lines wrap, and a text diagram scrolls with a visible scrollbar.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing() -> list[str]:
    missing = []
    for name in NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


needs_mkdocs = pytest.mark.skipif(
    bool(_missing()), reason=f"the docs extra is not installed (pip install -e '.[docs]'): missing {_missing()}"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


def _text(site: Path, page: str) -> str:
    """A built page's text, tags dropped and entities decoded."""
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return unescape(re.sub(r"<[^>]+>", "", html))


@needs_mkdocs
def test_the_observation_table_has_every_layout_part_with_its_range(site: Path) -> None:
    from bigtwo.env.engine.observation import LAYOUT, obs_size, part_slices

    text = _text(site, "environments")
    for part, at in zip(LAYOUT, part_slices(4).values(), strict=True):
        assert re.search(rf"\[{at.start}, {at.stop}\)\s*{part.name}\b", text), f"observation part {part.name} {at}"
    assert f"obs_size(4) = {obs_size(4)}" in text


@needs_mkdocs
def test_the_action_ids_table_has_every_named_variant(site: Path) -> None:
    from bigtwo.env import action_table, load_variant, variant_names

    text = _text(site, "environments")
    for name in variant_names():
        size = action_table(load_variant(name)).size
        assert re.search(rf"{name}\s*\(all\)\s*0 \.\. {size - 1}\s*{size:,}", text), name


@needs_mkdocs
def test_the_training_page_lists_every_config_field(site: Path) -> None:
    from bigtwo.train.config import FIELDS, field_docs

    text = _text(site, "training")
    docs = field_docs()
    for name in FIELDS:
        assert re.search(rf"\n{name}\n", text), f"training field {name}"
        assert docs[name].replace("``", "")[:40] in text.replace("``", ""), f"description of {name}"


@needs_mkdocs
def test_every_module_has_its_api_section_and_doctests_are_code(site: Path) -> None:
    for package in ("bigtwo.env", "bigtwo.agents", "bigtwo.arena", "bigtwo.train", "bigtwo.web", "bigtwo.cli"):
        page = package.split(".")[1]  # docs/api/env.md, ...
        html = (site / "api" / page / "index.html").read_text(encoding="utf-8")
        for path in sorted(ROOT.joinpath(*package.split(".")).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if any(part.startswith("_") and part != "__init__" for part in parts):
                continue  # private modules (``__main__``) have no section, as docs/hooks.py leaves them out
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            assert f'id="{module}"' in html, f"API section of {module}"
    environment_api = (site / "api" / "env" / "index.html").read_text(encoding="utf-8")
    # the doctests, fenced by docs/griffe_doctests.py: highlighted as console sessions (a prompt span)
    assert '<span class="gp">&gt;&gt;&gt; </span>' in environment_api
    assert "@LAYOUT_TABLE@" not in environment_api  # aec's docstring as imported, its table written in


@needs_mkdocs
def test_the_rules_page_is_rules_md(site: Path) -> None:
    text = _text(site, "rules")
    headings = re.findall(r"^## (.+)$", (ROOT / "RULES.md").read_text(encoding="utf-8"), flags=re.M)
    assert len(headings) >= 8
    for heading in headings:
        assert heading.replace("`", "") in text, heading


def _hooks() -> Any:
    """docs/hooks.py, loaded as MkDocs loads it (from its file: ``docs`` is no package)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)  # type: ignore[union-attr]
    return hooks


def test_every_docs_marker_is_known_and_an_unknown_one_fails() -> None:
    hooks = _hooks()
    with pytest.raises(
        ValueError, match="unknown docs marker '<!-- bigtwo:observations -->'; allowed: bigtwo:observation"
    ):
        hooks.on_page_markdown("<!-- bigtwo:observations -->\n")
    with pytest.raises(ValueError, match="bigtwo:api 'numpy': allowed packages are bigtwo.env, bigtwo.agents"):
        hooks.on_page_markdown("<!-- bigtwo:api numpy -->\n")
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    for marker in ("observation", "actions", "train-fields", "api bigtwo.env", "api bigtwo.train"):
        assert f"<!-- bigtwo:{marker} -->" in pages


def test_the_fields_table_lists_exactly_each_choice_fields_choices() -> None:
    """The training page's table (``bigtwo:train-fields``) gives each choice field's values, as its
    ``Choice`` declares them, and nothing else in the allowed column."""
    from bigtwo.train.config import CHOICES

    hooks = _hooks()
    rows = {row.split(" | ")[0].strip("| `"): row for row in hooks.train_fields().splitlines()[2:]}
    assert CHOICES and set(CHOICES) <= set(rows)
    for name, choice in CHOICES.items():
        assert rows[name].endswith(f" | {', '.join(choice.values)} |"), rows[name]


@pytest.mark.parametrize("package", ["bigtwo.train", "bigtwo.arena"])
def test_a_packages_module_table_names_its_modules(package: str) -> None:
    """The ``| module | job |`` table of the package's docstring names each of its modules and
    sub-packages once, and nothing that is not one (a module moved away leaves no row behind)."""
    folder = ROOT.joinpath(*package.split("."))
    modules = {p.stem for p in folder.glob("*.py") if not p.name.startswith("_")}
    modules |= {p.parent.name for p in folder.glob("*/__init__.py")}
    doc = importlib.import_module(package).__doc__ or ""
    rows = re.findall(r"^\| ``(\w+)`` \|", doc, flags=re.M)
    assert sorted(rows) == sorted(modules), set(rows) ^ modules


def test_readme_links_resolve_and_the_extras_table_names_every_extra() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib")
    import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        assert "://" in link or (ROOT / link).exists(), f"README links to {link}, which is not in the repository"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    started = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    table = started.split("The extras, each", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z0-9]+)` \|", table, flags=re.M))
    assert listed == set(extras), f"extras table: {sorted(listed)}; pyproject.toml: {sorted(extras)}"
    assert "docs" in extras["all"][0]


# Each ``pre > code`` of a page: whether it shows all its text, its width unwrapped (a hidden copy
# with ``white-space: pre``, laid out in the same place), and the styles that decide.
_CODE_BLOCKS = """() => [...document.querySelectorAll('pre > code')].map(code => {
    const probe = code.cloneNode(true);
    probe.style.cssText = 'position: absolute; visibility: hidden; white-space: pre; width: max-content';
    code.parentElement.appendChild(probe);
    const natural = probe.getBoundingClientRect().width;
    probe.remove();
    const style = getComputedStyle(code);
    const block = code.closest('[class*="language-"]');
    return {
        text: code.textContent.slice(0, 60), language: block ? block.className : '',
        fits: code.scrollWidth <= code.clientWidth + 1, width: code.clientWidth, natural: natural,
        overflowX: style.overflowX, whiteSpace: style.whiteSpace, scrollbar: style.scrollbarWidth,
    };
})"""


@needs_mkdocs
def test_no_code_block_is_cut_off_at_1280_px(site: Path, tmp_path: Path) -> None:
    """Every built page at a 1280 x 800 viewport: a code block's long lines wrap, so all its text is
    in view, except a text diagram (no language), which keeps its columns and scrolls with a
    scrollbar. At least one block is wider than its column unwrapped (the set-up command), and a
    screenshot of it lands in ``tmp_path``."""
    from playwright.sync_api import sync_playwright
    from test_web_browser import ARGS, CHROMIUM

    pages = sorted(site.rglob("index.html"))
    assert len(pages) >= 15
    wrapped: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        for html in pages:
            page.goto(html.as_uri())
            where = html.parent.relative_to(site).as_posix() or "index"
            for block in page.evaluate(_CODE_BLOCKS):
                if "language-text" in block["language"]:
                    assert block["whiteSpace"] == "pre" and block["overflowX"] in ("auto", "scroll"), (where, block)
                    assert block["scrollbar"] != "none", (where, block)
                    continue
                assert block["fits"] and block["whiteSpace"] == "pre-wrap", f"{where}: code cut off: {block}"
                if block["natural"] > block["width"] + 1:
                    wrapped.append(f"{where}: {block['text']}")
        page.goto((site / "getting-started" / "index.html").as_uri())
        setup = page.locator("pre > code", has_text="apt-get update").first
        setup.scroll_into_view_if_needed()
        shot = tmp_path / "getting-started-1280.png"
        page.screenshot(path=str(shot))
        box = setup.bounding_box()
        browser.close()
    assert any(w.startswith("getting-started:") for w in wrapped), wrapped  # the long set-up command wrapped
    assert box is not None and box["x"] + box["width"] <= 1280, box
    assert shot.stat().st_size > 10_000
