"""The "Library reference" part: one page per public module of attnlib, generated from
the package at the start of every build.

Every module of ``attnlib`` whose name has no leading underscore and which defines
``__all__`` gets a page ``book/api/generated/<module>.md`` that documents each name
of ``__all__`` with autodoc (numpy-style docstrings through napoleon). Names that a
module re-exports from another one (the top-level namespace re-exports most of the
core) are listed with a link to the page of the module that defines them, so that
every object is documented exactly once. A new module, or a new name in an
``__all__``, appears without editing anything here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGE = "attnlib"
OUT = Path("book") / "api" / "generated"


def public_modules(package: str = PACKAGE) -> list[ModuleType]:
    """The package and its submodules that have no private part and an ``__all__``."""
    root = importlib.import_module(package)
    mods = [root]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if _private(info.name):
            continue
        mods.append(importlib.import_module(info.name))
    return [m for m in mods if hasattr(m, "__all__")]


def _private(modname: str) -> bool:
    return any(part.startswith("_") for part in modname.split("."))


def _source_lines(module: ModuleType) -> list[str]:
    try:
        return inspect.getsource(module).splitlines()
    except (OSError, TypeError):
        return []


def _assignment(lines: list[str], attr: str) -> int | None:
    """Index of the top-level line that assigns ``attr``, or None."""
    pattern = re.compile(rf"{re.escape(attr)}\s*[:=]")
    return next((i for i, line in enumerate(lines) if pattern.match(line)), None)


def _assigns(module: ModuleType, attr: str) -> bool:
    """Whether the source of ``module`` assigns ``attr`` at top level."""
    return _assignment(_source_lines(module), attr) is not None


def data_comment(attr: str, package: str = PACKAGE) -> str:
    """The ``#:`` comment above the top-level assignment of ``attr`` in a module of
    ``package`` (private modules included); empty if there is none."""
    root = importlib.import_module(package)
    names = [package] + [
        i.name for i in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")
    ]
    for modname in names:
        lines = _source_lines(importlib.import_module(modname))
        i = _assignment(lines, attr)
        if i is None:
            continue
        k = i
        while k > 0 and lines[k - 1].startswith("#:"):
            k -= 1
        if k < i:
            return "\n".join(c[2:].strip() for c in lines[k:i])
    return ""


def home(obj: Any, attr: str, where: ModuleType, modules: list[ModuleType]) -> str:
    """The public module whose page documents ``obj``, exported as ``attr``.

    Classes and functions belong to the module that defines them, data to the module
    whose source assigns the name; an object of a private module is documented on
    the page of the public module that exports it.
    """
    if inspect.ismodule(obj):
        return obj.__name__
    mod = getattr(obj, "__module__", None)
    if (inspect.isclass(obj) or inspect.isroutine(obj)) and mod:
        if not _private(mod):
            return mod
        # defined in a private module: the first public submodule that exports it
        # (the package's own namespace only if no submodule does), so that it is
        # documented once however many namespaces re-export it
        for m in modules:
            if m.__name__ != PACKAGE and attr in m.__all__ and _get(m, attr) is obj:
                return m.__name__
        return where.__name__
    for m in modules:
        if _get(m, attr) is obj and _assigns(m, attr):
            return m.__name__
    # assigned in a private module: documented once, like a class of one
    for m in modules:
        if m.__name__ != PACKAGE and attr in m.__all__ and _get(m, attr) is obj:
            return m.__name__
    return where.__name__


def _role(obj: Any) -> str:
    if inspect.ismodule(obj):
        return "mod"
    if inspect.isclass(obj):
        return "class"
    if inspect.isroutine(obj):
        return "func"
    return "data"


DIRECTIVE = {"class": "autoclass", "func": "autofunction", "data": "autodata"}


def page(module: ModuleType, modules: list[ModuleType]) -> str:
    """MyST source of the reference page of ``module``."""
    name = module.__name__
    own, elsewhere, deprecated = [], [], []
    for attr in module.__all__:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            obj = getattr(module, attr)
        notes = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        if notes:
            deprecated.append(f"- `{attr}`: {notes[0].message}")
            continue
        target, role = home(obj, attr, module, modules), _role(obj)
        if target == name and role == "data" and not _assigns(module, attr):
            # assigned in a private module: autodata would read no "#:" comment
            # here and fall back to the docstring of the value's type
            own += [
                f".. py:data:: {attr}",
                f"   :module: {name}",
                # on one line: an array's repr spans several
                f"   :value: {' '.join(repr(obj).split())}",
                "",
            ]
            own += [f"   {line}" for line in data_comment(attr).splitlines()] + [""]
        elif target == name and role != "mod":
            own += [f".. {DIRECTIVE[role]}:: {name}.{attr}"]
            own += ["   :members:", ""] if role == "class" else [""]
        elif role == "mod":
            elsewhere.append(f"- {{py:mod}}`{attr} <{target}>`")
        else:
            # an alias (NoisyTrajectory = Trajectory) links to the object's own name
            real = getattr(obj, "__name__", attr) if role != "data" else attr
            elsewhere.append(f"- {{py:{role}}}`{attr} <{target}.{real}>`")
    lines = [f"# `{name}`", "", "```{eval-rst}", f".. automodule:: {name}", ""]
    lines += [*own, "```", ""]
    if elsewhere:
        lines += [
            "Names of this namespace documented on the page of their module:",
            "",
            *elsewhere,
            "",
        ]
    if deprecated:
        lines += ["Deprecated names, kept for one release:", "", *deprecated, ""]
    return "\n".join(lines)


def _get(module: ModuleType, attr: str) -> Any:
    """``getattr`` that stays quiet about deprecated aliases."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(module, attr, None)


def canonical(target: str) -> str | None:
    """``attnlib.Model`` -> ``attnlib.attention.Model``: where a re-exported class or
    function is documented (None if ``target`` names nothing of the kind)."""
    parts = target.split(".")
    for k in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                for attr in parts[k:]:
                    obj = getattr(obj, attr)
        except AttributeError:
            return None
        mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if (inspect.isclass(obj) or inspect.isroutine(obj)) and mod and qual:
            if _private(mod) and "." not in qual:
                # defined in a private module: documented where home() puts it
                package = importlib.import_module(PACKAGE)
                mod = home(obj, qual, package, public_modules())
            return f"{mod}.{qual}"
        return None
    return None


def resolve_reexport(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """``missing-reference``: a docstring's reference to a name through a namespace
    that re-exports it (``attnlib.simulate``) links to where it is documented."""
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith(f"{PACKAGE}."):
        return None
    real = canonical(target)
    if real is None or real == target:
        return None
    return env.get_domain("py").resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], real, node, contnode
    )


def escape_type_stars(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """``autodoc-process-docstring`` after napoleon: a ``*`` in a type field (``shape
    (T, *X0.shape)``) is text, not the start of an emphasis."""
    for i, line in enumerate(lines):
        if line.lstrip().startswith((":type", ":rtype")):
            head, sep, rest = line.partition(": ")
            lines[i] = head + sep + re.sub(r"(?<!\\)\*", r"\\*", rest)


#: The papers the docstrings cite by a label (``[GLPR] Fig. 3``) and their entries in
#: ``book/references.bib``: on the pages of the reference, each label is a citation
#: that links to the bibliography, as in the chapters.
CITATIONS = {
    "GLPR": "GLPR2023",
    "BKKRW": "BKKRW2025",
    "CACP": "CACP2025",
    "DGR": "DGR2026",
    "GKPR": "GKPR2024",
    "GRS": "GRS2024",
    "KPR": "Karagodin2024Causal",
    "AGRB": "Alcalde2025FrankWolfe",
}
CITE_LABEL = re.compile(r"\[(" + "|".join(CITATIONS) + r")\]")


def link_citations(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """``autodoc-process-docstring``: ``[GLPR]`` becomes the citation
    ``:cite:t:`GLPR2023``` (author and year, linked to the bibliography)."""
    for i, line in enumerate(lines):
        lines[i] = CITE_LABEL.sub(lambda m: f":cite:t:`{CITATIONS[m.group(1)]}`", line)


def write_pages(srcdir: Path) -> list[Path]:
    """Write (only when changed) the pages and drop those of vanished modules."""
    out = srcdir / OUT
    out.mkdir(parents=True, exist_ok=True)
    written = []
    modules = public_modules()
    for module in modules:
        path = out / f"{module.__name__}.md"
        text = page(module, modules)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    for stale in set(out.glob("*.md")) - set(written):
        stale.unlink()
    return written
