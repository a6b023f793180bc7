"""The docs name what is there (issue 27, item 4): every repository path named in
README.md, docs/*.md and docs/guide/*.md exists; every test a doc names (``file.py::name``,
and the ``::name`` after it) is one test file that defines it; and in the architecture's
*Where is X* table and *Where a score goes* walk, every function, class or constant named
beside a file is defined in the files that row or step names.

A doc that names a path that moved, a test that was renamed, or a function that went
fails here, by doc and name, rather than sending a newcomer on a wrong turn.  Paths are
found by rule, not listed: a word that starts with one of the repository's top folders
(``gateway/…``, ``storage/…``, ``tests/…``, …) is a path; a pattern (``*``, ``{a,b}``,
``<name>``, ``…``) is not checked.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "guide").glob("*.md")),
]
TOP = ("gateway", "storage", "protocols", "emulators", "bench", "tests", "deploy", "tools", "docs")
# (a path followed by ``::`` is a test, checked with the tests below)
_PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(TOP)})/[\w./@*{{}}<>…-]*+)(?!::)")
_PATTERN = re.compile(r"[*{}<>…]")
_TEST_REF = re.compile(r"`([\w/]*\w\.py)?::([A-Za-z_]\w*)`")
_TICKED = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
_REPO_PATH = re.compile(rf"(?:{'|'.join(TOP)})/[\w/.@-]*")


def _rel(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


def _named_paths(text: str) -> set[str]:
    found = set()
    for match in _PATH.finditer(text):
        path = match.group(1).rstrip(".,;:")
        if not _PATTERN.search(path):
            found.add(path)
    return found


@cache
def _test_files() -> tuple[Path, ...]:
    return tuple(sorted((ROOT / "tests").rglob("test_*.py")))


@cache
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _defines(files: list[Path], dotted: str) -> bool:
    """A def, class or (module- or class-level) assignment of the name's last part, or
    the name as a whole: a module among the files, a table (``__tablename__``), or a
    string the code spells out (an event's or an audit action's name)."""
    last = re.escape(dotted.removesuffix("()").rsplit(".", 1)[-1])
    whole = re.escape(dotted.removesuffix("()"))
    pattern = re.compile(
        rf"^\s*(?:(?:async\s+)?def|class)\s+{last}\b|^\s*{last}\s*[:=]|[\"']{whole}[\"']", re.M
    )
    return any(
        f.is_file() and (f.stem == dotted or pattern.search(_source(f)) is not None) for f in files
    )


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_every_repository_path_a_doc_names_exists(doc: Path) -> None:
    missing = sorted(p for p in _named_paths(doc.read_text("utf-8")) if not (ROOT / p).exists())
    assert not missing, f"{_rel(doc)} names paths that do not exist: {missing}"


def test_the_path_rule_finds_paths_and_leaves_patterns() -> None:
    text = (
        "see `gateway/heats/spool.py`, storage/journal.py. and gateway/app/commands/; "
        "not tests/*.py, docs/{a,b}.md, deploy/<name>.service or bench/… nor x/gateway/y"
    )
    assert _named_paths(text) == {
        "gateway/heats/spool.py",
        "storage/journal.py",
        "gateway/app/commands/",
    }


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_every_test_a_doc_names_is_defined_where_it_says(doc: Path) -> None:
    """``tournament/test_x.py::test_a``, ``::test_b`` (the rule tables' form): the file is
    the one test file ending so, and it defines each test named after it."""
    wrong = []
    for number, line in enumerate(doc.read_text("utf-8").splitlines(), start=1):
        current: Path | None = None
        for match in _TEST_REF.finditer(line):
            name, test = match.group(1), match.group(2)
            if name is not None:
                files = [f for f in _test_files() if f.as_posix().endswith("/" + name)]
                current = files[0] if len(files) == 1 else None
                if current is None:
                    wrong.append(f"line {number}: {name} matches {len(files)} test files")
                    continue
            if current is None:
                wrong.append(f"line {number}: ::{test} follows no test file")
            elif not _defines([current], test):
                wrong.append(f"line {number}: {current.relative_to(ROOT)} has no {test}")
    assert not wrong, f"{_rel(doc)}: " + "; ".join(wrong)


def _where_entries() -> list[tuple[str, str, str]]:
    """(what it is for, the text naming its files, the text naming its names): the *Where
    is X* rows, and the steps of *Where a score goes* (a step may name a function of a
    file another step names: the walk's files are each step's)."""
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    table = text[text.index("| looking for | it is in |") :].splitlines()[2:]
    entries = []
    for line in table:
        if not line.startswith("|"):
            break
        looking_for, where = line.strip("|").split("|", 1)
        entries.append((looking_for.strip(), where, where))
    assert entries
    walk = text[text.index("## Where a score goes") :]
    walk = walk[: walk.index("\n## ", 1)]
    steps = re.findall(r"^\d+\. \*\*(\w+)\.\*\*(.*?)(?=^\d+\. |\Z)", walk, re.M | re.S)
    assert len(steps) > 1
    for title, body in steps:
        entries.append((f"a score, {title}", walk, body))
    return entries


def _files_named(what: str, text: str) -> list[Path]:
    files: list[Path] = []
    folder: Path | None = None
    for ticked in _TICKED.findall(text):
        if _REPO_PATH.fullmatch(ticked):
            path = ROOT / ticked
            assert path.exists(), f"{what}: {ticked} does not exist"
            folder = path if path.is_dir() else path.parent
            files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
        elif re.fullmatch(r"[\w-]+\.py", ticked) and folder is not None:  # beside the last
            assert (folder / ticked).is_file(), f"{what}: {ticked} is not in {folder}"
            files.append(folder / ticked)
    return files


@pytest.mark.parametrize(
    ("what", "context", "where"), _where_entries(), ids=[e[0][:40] for e in _where_entries()]
)
def test_every_name_in_a_where_row_is_defined_in_its_files(
    what: str, context: str, where: str
) -> None:
    files = _files_named(what, context)
    names = [
        t for t in _TICKED.findall(where) if _NAME.fullmatch(t) and not t.endswith((".py", ".md"))
    ]
    undefined = [n for n in names if not _defines(files, n)]
    shown = [f.relative_to(ROOT).as_posix() for f in files]
    assert not undefined, f"{what}: {undefined} defined in none of {shown}"


def _contract_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    named: set[str] = set()
    for contract in contracts:
        for key in ("source_modules", "forbidden_modules", "ancestors"):
            named.update(m for m in contract.get(key, ()) if m.startswith("gateway."))
    return {".".join(m.split(".")[:2]) for m in named}


def test_the_architecture_diagram_names_every_package_of_the_gateway() -> None:
    """The diagram and the package table of docs/architecture.md name every package and
    leaf module of ``gateway/``, and every one the import contracts (pyproject.toml) name."""
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    diagram = text[text.index("```\n") + 4 : text.index("```", text.index("```\n") + 4)]
    table = text[text.index("| package | job | imports |") : text.index("## The contracts")]
    gateway = ROOT / "gateway"
    packages = {f"gateway.{p.name}" for p in gateway.iterdir() if (p / "__init__.py").is_file()}
    leaves = {f"gateway.{p.stem}" for p in gateway.glob("*.py") if not p.stem.startswith("__")}
    expected = packages | leaves | _contract_modules()
    assert "gateway.records" in expected  # the rule reads the tree, not a list
    missing_in_diagram = sorted(m for m in expected if not re.search(rf"{m}\b", diagram))
    missing_in_table = sorted(m for m in expected if not re.search(rf"`{m}`", table))
    assert not missing_in_diagram, f"the diagram leaves out {missing_in_diagram}"
    assert not missing_in_table, f"the package table leaves out {missing_in_table}"
