"""``python -m tools.coursework build``: the assignments (``make assignments``).

For each master of ``book/assignments``: the student notebook, the solution notebook
and the autograder zip in ``_build/assignments/<slug>/``.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from gradebox.masters import (
    _TEST_CONFIG,
    GRADER_KEYS,
    expected_cell,
    expected_values,
    parse_master,
    raw_header,
)

from .common import (
    BUILD,
    CHECK_CELL,
    GRADESCOPE_FILES,
    MASTERS,
    PYTHON_VERSION,
    ROOT,
    RUNTIME,
    CourseworkError,
    pins,
    run,
)
from .masters import master_paths


def build_wheel(dest: Path) -> Path:
    """Build a wheel of this checkout's attnlib into ``dest`` (no network)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "attnlib-src"
        shutil.copytree(
            ROOT / "attnlib",
            src / "attnlib",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, src / name)
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--quiet",
                "--disable-pip-version-check",
                "-w",
                str(dest),
                str(src),
            ],
            what="building the attnlib wheel",
        )
    wheels = sorted(dest.glob("attnlib-*.whl"))
    if not wheels:
        raise CourseworkError("pip wheel produced no attnlib wheel")
    return wheels[-1]


# The student's check of an "implement" question applies the grader's rule: the
# functions are wrapped, for the test only (otter runs a test in a copy of the
# notebook's names), so that a call that runs code of attnlib fails with this.
_GUARD = """\
def _without_attnlib(_f, _name):
    import sys, threading
    def _call(*args, **kwargs):
        _seen = []
        def _hook(frame, event, arg):
            _module = str(frame.f_globals.get("__name__", ""))
            if event == "call" and not _seen and _module.split(".")[0] == "attnlib":
                _seen.append(f"{_module}.{frame.f_code.co_name}")
        _old = sys.getprofile()
        sys.setprofile(_hook)
        threading.setprofile(_hook)
        try:
            _out = _f(*args, **kwargs)
        finally:
            sys.setprofile(_old)
            threading.setprofile(None)
        assert not _seen, (f"{_name} calls attnlib ({_seen[0]}): this question asks "
            "you to write it yourself, without the library (make grade gives 0)")
        return _out
    return _call
"""


def guard_public_test(source: str, names: list[str]) -> str:
    """A public test of an "implement" question that fails, with the grader's
    message, when one of the functions ``names`` runs code of attnlib (hidden tests
    are run by the grader, which applies the rule itself)."""
    match = _TEST_CONFIG.match(source)
    config = yaml.safe_load(match.group(1)) if match else {}
    if not isinstance(config, dict) or config.get("hidden"):
        return source
    head, body = (
        (source[: match.end()], source[match.end() :]) if match else ("", source)
    )
    # one line, so that otter's report of a failing test grows by one example only
    wrap = "; ".join(
        f"{n} = _without_attnlib({n}, {n!r}) if callable({n}) else {n}" for n in names
    )
    return f"{head}exec({_GUARD!r}); {wrap}\n{body}"


def _assignment_notebook(master: Path, src: Path, wheel: Path) -> Path:
    """The master as an .ipynb whose config adds the autograder's requirements."""
    import jupytext
    import nbformat
    import yaml

    pinned = pins()
    reqs = [f"{p}=={pinned[p]}" for p in RUNTIME if p in pinned]
    reqs.append(f"{GRADESCOPE_FILES}/{wheel.name}")
    shutil.copy2(wheel, src / wheel.name)
    nb = jupytext.read(master)
    head, config = raw_header(nb.cells[0].source)
    extra = config.get("requirements")
    if isinstance(extra, list):
        reqs.extend(str(r) for r in extra)
    elif extra:
        raise CourseworkError(
            f"{master}: give extra requirements as a YAML list, not a file ({extra!r})"
        )
    (src / "requirements.txt").write_text("\n".join(reqs) + "\n")
    config["requirements"] = "requirements.txt"
    config["autograder_files"] = [*config.get("autograder_files", []), wheel.name]
    config["python_version"] = PYTHON_VERSION
    config.setdefault("name", master.stem)
    nb.cells[0].source = "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(
        config, sort_keys=False
    )
    # what otter does not know: the grader's keys of a question (otter rejects
    # them) and the EXPECTED blocks, replaced by one cell with their values
    cells, inside, implement, tests = [nb.cells[0]], False, [], False
    for cell in nb.cells[1:]:
        head, data = raw_header(cell.source) if cell.cell_type == "raw" else ("", {})
        if head in ("# BEGIN EXPECTED", "# END EXPECTED"):
            inside = head == "# BEGIN EXPECTED"
            continue
        if inside:
            continue
        if head in ("# BEGIN TESTS", "# END TESTS"):
            tests = head == "# BEGIN TESTS"
        if head == "# BEGIN QUESTION":
            names = data.get("implement") or []
            implement = [names] if isinstance(names, str) else list(names)
        if tests and implement and cell.cell_type == "code":
            cell.source = guard_public_test(cell.source, implement)
        if head == "# BEGIN QUESTION" and set(data) & GRADER_KEYS:
            for key in GRADER_KEYS:
                data.pop(key, None)
            cell.source = "# BEGIN QUESTION\n" + yaml.safe_dump(data, sort_keys=False)
        cells.append(cell)
    parsed = parse_master(master)
    if parsed.expected_cells:
        first = next(i for i, c in enumerate(cells) if c.cell_type == "code")
        loader = nbformat.v4.new_code_cell(expected_cell(expected_values(parsed)))
        cells.insert(first + 1, loader)
    nb.cells = cells
    out = src / f"{master.stem}.ipynb"
    jupytext.write(nb, out, fmt="ipynb")
    return out


def instructor_notes(m) -> str:
    """The rubric (``rubrics/<slug>.md`` beside the master) and the model answer of
    every question graded by hand: for instructors, never in an HTML edition."""
    rubric = m.path.parent / "rubrics" / f"{m.slug}.md"
    lines = [f"# {m.title}: rubric and model answers (instructors only)", ""]
    lines += [rubric.read_text().strip(), ""] if rubric.exists() else []
    for q in m.manual:
        lines += [f"## Model answer of `{q.name}` ({q.points:g} points)", ""]
        lines += [*q.solution, ""]
    return "\n".join(lines).rstrip() + "\n"


KERNEL_START_ATTEMPTS = 3
_KERNEL_START_ERRORS = (
    "Kernel died before replying to kernel_info",
    "Address already in use",
)


def _kernel_start_failed(exc: Exception) -> bool:
    """True if ``exc`` reports a kernel that died while starting."""
    return any(m in str(exc) for m in _KERNEL_START_ERRORS)


def _add_check_cell(notebook: Path, folder: Path) -> None:
    """Copy the student notebook into ``folder`` with :data:`CHECK_CELL` after
    otter's first cell (the one that makes ``grader``)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    first = next(
        (i for i, c in enumerate(nb.cells) if "otter.Notebook(" in c.source), None
    )
    if first is None:
        raise CourseworkError(f"{notebook.name}: otter's cell that makes grader")
    cell = nbformat.v4.new_code_cell(CHECK_CELL)
    cell.id = "short-check-feedback"
    nb.cells.insert(first + 1, cell)
    nbformat.write(nb, folder / notebook.name)


def build_assignment(slug: str, master: Path, wheel: Path, out: Path) -> Path:
    """Build one assignment into ``out/<slug>`` (replaced only on success).

    Layout: ``student/<slug>.ipynb`` (to hand out), ``solution/<slug>.ipynb``
    (instructors), ``<slug>-autograder.zip`` (``make grade``, Gradescope),
    ``rubric.md`` (instructors: the rubric and model answer of each question graded
    by hand), ``questions.json`` (names, points, manual flags), ``otter/`` (otter
    assign's own output) and ``src/`` (the notebook given to otter assign).
    """
    work = out / f".partial-{slug}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "src").mkdir(parents=True)
    nb = _assignment_notebook(master, work / "src", wheel)
    for attempt in range(KERNEL_START_ATTEMPTS):
        try:
            run(
                [sys.executable, "-m", "otter", "assign", nb.name, str(work / "otter")],
                cwd=work / "src",
                what=f"otter assign {slug}",
            )
            break
        except CourseworkError as exc:
            # a kernel that could not start (e.g. a port taken between the choice
            # and the bind while another build starts its kernel) is not the
            # master's fault: start again; any other failure is reported at once
            if attempt + 1 == KERNEL_START_ATTEMPTS or not _kernel_start_failed(exc):
                raise
            shutil.rmtree(work / "otter", ignore_errors=True)
    zips = sorted((work / "otter" / "autograder").glob(f"{slug}-autograder_*.zip"))
    if len(zips) != 1:
        raise CourseworkError(f"otter assign {slug}: expected one autograder zip")
    (work / "student").mkdir()
    (work / "solution").mkdir()
    _add_check_cell(work / "otter" / "student" / f"{slug}.ipynb", work / "student")
    shutil.copy2(work / "otter" / "autograder" / f"{slug}.ipynb", work / "solution")
    shutil.copy2(zips[0], work / f"{slug}-autograder.zip")
    m = parse_master(master)
    info = {
        "slug": slug,
        "title": m.title,
        "points": m.points,
        "questions": [
            {"name": q.name, "points": q.points, "manual": q.manual}
            for q in m.questions
        ],
    }
    (work / "questions.json").write_text(json.dumps(info, indent=2) + "\n")
    (work / "rubric.md").write_text(instructor_notes(m))
    final = out / slug
    shutil.rmtree(final, ignore_errors=True)
    work.rename(final)
    return final


def build(
    slugs: list[str] | None = None,
    *,
    changed: list[str] | None = None,
    out: Path = BUILD,
    jobs: int | None = None,
) -> list[str]:
    """Build the assignments that need it, in parallel.

    Parameters
    ----------
    slugs : list of str, optional
        Build exactly these. Without it: every master named in ``changed`` (all of
        them if ``changed`` names anything else, e.g. this script or attnlib), every
        master whose build is missing, and remove the builds of deleted masters.
    changed : list of str, optional
        Paths that changed since the last build (the Makefile passes ``$?``).
    out : Path
        Output root (``_build/assignments``).
    jobs : int, optional
        Parallel builds (default: the number of CPUs).

    Returns
    -------
    list of str
        The slugs built.
    """
    masters = master_paths()
    if slugs:
        unknown = sorted(set(slugs) - set(masters))
        if unknown:
            raise CourseworkError(
                f"no master for {unknown} in {MASTERS} (have: {sorted(masters)})"
            )
        pending = list(slugs)
    else:
        pending = set()
        for p in changed or []:
            path = (ROOT / p).resolve()
            if path.parent == MASTERS.resolve() and path.suffix == ".md":
                pending.add(path.stem)
            else:
                pending.update(masters)
        pending.update(s for s in masters if not (out / s / "questions.json").exists())
        pending = sorted(pending & set(masters))
        if out.exists():
            for d in out.iterdir():
                if d.is_dir() and not d.name.startswith(".") and d.name not in masters:
                    shutil.rmtree(d)
    out.mkdir(parents=True, exist_ok=True)
    if not pending:
        print("assignments are up to date")
        return []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        workers = max(1, min(jobs or os.cpu_count() or 1, len(pending)))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = {
                pool.submit(build_assignment, s, masters[s], wheel, out): s
                for s in pending
            }
            errors = []
            for fut in concurrent.futures.as_completed(futures):
                slug = futures[fut]
                try:
                    fut.result()
                    print(f"built {slug}: {out / slug}")
                except CourseworkError as exc:
                    errors.append(f"{slug}: {exc}")
    if errors:
        raise CourseworkError("\n\n".join(errors))
    print(f"{len(pending)} assignment(s) built in {time.perf_counter() - start:.0f} s")
    return pending
