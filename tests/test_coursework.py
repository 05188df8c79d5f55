"""The coursework: every assignment master builds, grades right and hides its secrets.

Generic over the masters in ``book/assignments/``. Each assignment is built once per
test run (into a temporary folder), and ``make grade``'s grader
(:mod:`tools.coursework.grade`, the package :mod:`gradebox` with the book's
settings) grades, per assignment and two at a time: the
solution (full marks), the unmodified student notebook (zero) and the wrong
submissions of ``tests/assignments/<slug>.py`` (exactly the declared scores; mistakes
that affect different questions are made together in one notebook, as a student may
make them). The integrity of grading (attacks, malformed inputs, interruption,
concurrent runs, merging) is in ``tests/test_grading.py``.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.assignments import builds
from gradebox import sandbox
from tools.coursework import common, masters, pages
from tools.coursework import grade as cwgrade
from tools.coursework import student as cwstudent

ROOT = common.ROOT

# COURSEWORK_ONLY=a1_modelling,a3_gaussian limits a run to some assignments (while
# writing one); CI runs them all. The builds are shared with tests/test_grading.py.
SLUGS = builds.SLUGS
JOBS = 2
# building the assignments and grading notebooks: a slow lane (make test-fast skips it)
SLOW = pytest.mark.slow
# CPU seconds per notebook: a solution needs about 5 here, so a machine four times
# slower passes; wall-clock time only stops a notebook that sleeps
LIMITS = sandbox.Limits(cpu=60, wall_s=600, sandbox_memory_mb=3072)
needs_sandbox = pytest.mark.skipif(
    sandbox.bwrap() is None, reason="bubblewrap is not installed (.ci/run installs it)"
)


def _mistakes(slug: str) -> list[dict]:
    try:
        mod = importlib.import_module(f"tests.assignments.{slug}")
    except ModuleNotFoundError:
        return []
    return list(getattr(mod, "MISTAKES", []))


MISTAKE_CASES = [(s, i) for s in SLUGS for i, _ in enumerate(_mistakes(s))]


def _mistake_id(case):
    slug, i = case
    return f"{slug}-{_mistakes(slug)[i]['name']}"


def _apply(nb: dict, mistake: dict) -> None:
    """Make the mistake's replacements in the code cells of ``nb`` (in place)."""
    for old, new in mistake["replace"]:
        hits = [
            c
            for c in nb["cells"]
            if c["cell_type"] == "code" and old in "".join(c["source"])
        ]
        count = sum("".join(c["source"]).count(old) for c in hits)
        if count != 1:
            raise AssertionError(
                f"{mistake['name']!r}: {old!r} occurs {count} times in the solution's "
                "code cells (expected exactly once)"
            )
        src = "".join(hits[0]["source"]).replace(old, new)
        hits[0]["source"] = src.splitlines(keepends=True)


def apply_mistake(solution: Path, mistake: dict, dest: Path) -> Path:
    """Write the solution notebook with the mistake's replacements in its code."""
    return apply_mistakes(solution, [mistake], dest)


def apply_mistakes(solution: Path, mistakes: list[dict], dest: Path) -> Path:
    """Write the solution notebook with the replacements of several mistakes."""
    nb = json.loads(solution.read_text())
    for mistake in mistakes:
        _apply(nb, mistake)
    dest.write_text(json.dumps(nb))
    return dest


def mistake_groups(solution: Path, mistakes: list[dict]) -> list[list[int]]:
    """The wrong submissions to grade: mistakes packed into notebooks.

    A student may make several mistakes at once, and grading a notebook costs about
    15 s, so mistakes that affect disjoint sets of questions (and whose replacements
    apply together) are made in one notebook: each question of it is then affected
    by at most one mistake and must score what that mistake declares. The first
    mistake stays alone (``test_grade_folder`` regrades it and compares).
    """
    groups: list[list[int]] = []
    for i, mistake in enumerate(mistakes):
        qs = set(mistake["scores"])
        for g in groups[1:] if i else []:
            if qs & {q for j in g for q in mistakes[j]["scores"]}:
                continue
            try:
                nb = json.loads(solution.read_text())
                for j in [*g, i]:
                    _apply(nb, mistakes[j])
            except AssertionError:
                continue
            g.append(i)
            break
        else:
            groups.append([i])
    return groups


@pytest.fixture(scope="session")
def built() -> Path:
    return builds.built()


@pytest.fixture(scope="session")
def runs(built, tmp_path_factory) -> dict:
    """Grades of the solution, the student notebook and every wrong submission of
    each assignment, graded by ``make grade``'s grader, one folder per assignment."""
    sandbox.require(unsafe=False)
    results = {}
    for slug in SLUGS:
        folder = tmp_path_factory.mktemp(f"submissions-{slug}")
        sol = built / slug / "solution" / f"{slug}.ipynb"
        shutil.copy(sol, folder / "solution.ipynb")
        shutil.copy(
            built / slug / "student" / f"{slug}.ipynb", folder / "student.ipynb"
        )
        mistakes = _mistakes(slug)
        names = {}
        for group in mistake_groups(sol, mistakes):
            for i in group:
                results[("members", slug, i)] = group
            name = "m" + "-".join(map(str, group))
            try:
                apply_mistakes(
                    sol, [mistakes[i] for i in group], folder / f"{name}.ipynb"
                )
                names[name] = group
            except AssertionError as exc:
                results.update({(slug, i): exc for i in group})
        out = tmp_path_factory.mktemp(f"grades-{slug}")
        grades = cwgrade.grade(
            slug, folder, build_root=built, out=out, jobs=JOBS, limits=LIMITS
        )
        by_name = {g.student: g for g in grades}
        results[(slug, "solution")] = by_name["solution"]
        results[(slug, "student")] = by_name["student"]
        for name, group in names.items():
            results.update({(slug, i): by_name[name] for i in group})
    return results


def _info(built: Path, slug: str) -> dict:
    return json.loads((built / slug / "questions.json").read_text())


def _autograded(built: Path, slug: str) -> dict[str, float]:
    return {
        q["name"]: q["points"]
        for q in _info(built, slug)["questions"]
        if not q["manual"]
    }


# ---------------------------------------------------------------- conventions

SEEDLESS = [
    (re.compile(r"default_rng\(\s*\)"), "default_rng() without a seed"),
    (
        re.compile(
            r"np\.random\.(rand|randn|random|normal|uniform|choice|randint|"
            r"shuffle|permutation|standard_normal|seed)\("
        ),
        "numpy's global random state (use np.random.default_rng(seed))",
    ),
    (re.compile(r"^\s*import random\b|\brandom\.random\(", re.M), "the random module"),
    (re.compile(r"rng\s*=\s*None"), "rng=None (draw with a seed)"),
]


@pytest.mark.parametrize("slug", SLUGS)
def test_master_follows_the_conventions(slug):
    path = masters.master_paths()[slug]
    check_conventions(path)
    assert len(_mistakes(slug)) >= 2, f"{slug}: tests/assignments/{slug}.py needs 2+"


# an inner product <x, y> in a message: JupyterLab's grader.check shows messages as
# HTML, where it is a tag and vanishes ("subtract  x_i"): write ⟨x, y⟩
ANGLE_TAG = re.compile(r"<[A-Za-z\\/!?]")


def check_conventions(path: Path) -> None:
    """What every master, including one a lecturer extends, must satisfy."""
    header = path.read_text().split("---")[1]
    assert yaml.safe_load(header)["kernelspec"]["name"] == "python3"
    m = masters.parse_master(path)  # also checks that test points add up
    slug = m.slug
    assert m.config.get("init_cell", True) is True
    names = [q.name for q in m.questions]
    assert len(names) >= 4, f"{slug}: at least 4 questions, got {len(names)}"
    for i, name in enumerate(names, 1):
        assert re.fullmatch(rf"q{i}_[a-z0-9_]+", name), f"{slug}: question {i}: {name}"
    assert m.points >= 10, f"{slug}: at least 10 points, got {m.points}"
    assert len(m.manual) == 1, f"{slug}: exactly one written (manual) question"
    for q in m.autograded:
        assert q.points > 0 and q.public and q.hidden, (
            f"{slug}/{q.name}: needs points, a public and a hidden test case"
        )
        for body in q.public + q.hidden:
            assert "assert" in body, f"{slug}/{q.name}: a test case without assert"
            assert not ANGLE_TAG.search(body), (
                f"{slug}/{q.name}: '<' before a letter in a test: JupyterLab drops it"
            )
        if q.implement:
            for body in q.public:
                assert "attnlib" not in body, (
                    f"{slug}/{q.name}: a public test of an implement question shows "
                    "a library call: compare with expected[...] (an EXPECTED block)"
                )
    code = "\n".join(m.code)
    for pattern, what in SEEDLESS:
        assert not pattern.search(code), f"{slug}: randomness without a seed: {what}"
    rubric = path.parent / "rubrics" / f"{slug}.md"
    assert rubric.exists(), f"{slug}: missing rubric {rubric}"
    text = rubric.read_text()
    assert text.lstrip().startswith("###") and not re.search(r"^#{1,2} ", text, re.M)


def test_every_implement_question_names_its_functions():
    implements = {
        slug: [q.name for q in masters.parse_master(p).autograded if q.implement]
        for slug, p in masters.master_paths().items()
    }
    for slug, questions in implements.items():
        assert len(questions) >= 2, f"{slug}: implement questions {questions}"


def test_every_implement_question_states_the_rule_where_it_is_asked():
    """A student reads, in the question itself, that calling attnlib scores 0."""
    for slug, path in masters.master_paths().items():
        text = path.read_text()
        parts = text.split("\nimplement:")[1:]
        assert parts, slug
        for part in parts:
            asked = part[: part.index("# BEGIN SOLUTION")]
            prose = " ".join(asked.split())
            assert (
                "if `attnlib` code runs when your function is called, the "
                "question scores 0" in prose
            ), (slug, asked[:200])


def test_points_that_do_not_add_up_are_refused(tmp_path):
    src = masters.master_paths()["a1_modelling"].read_text()
    bad = src.replace("name: q1_attention\npoints: 4", "name: q1_attention\npoints: 5")
    path = tmp_path / "a1_modelling.md"
    path.write_text(bad)
    with pytest.raises(common.CourseworkError, match="add up to 4"):
        masters.parse_master(path)


def test_seed_check_catches_seedless_code():
    bad = [
        "rng = np.random.default_rng()",
        "X = np.random.randn(5, 3)",
        "sample_sphere(4, 3, rng=None)",
    ]
    for line in bad:
        assert any(p.search(line) for p, _ in SEEDLESS), line
    assert not any(p.search("np.random.default_rng(3)") for p, _ in SEEDLESS)


# ---------------------------------------------------------------- grading


@SLOW
@needs_sandbox
@pytest.mark.parametrize("slug", SLUGS)
def test_solution_scores_full_marks(runs, built, slug):
    g = runs[(slug, "solution")]
    # graded in full, and flagged as what it is, a copy of the solution notebook
    assert g.status == "flagged", g.reason
    assert g.scores == _autograded(built, slug)
    assert g.reason == "flagged: the same code as the solution notebook", (
        f"the solution raised while grading: {g.reason}"
    )


@SLOW
@needs_sandbox
@pytest.mark.parametrize("slug", SLUGS)
def test_unmodified_student_notebook_scores_zero(runs, built, slug):
    g = runs[(slug, "student")]
    assert g.status == "graded", g.reason
    assert set(g.scores) == set(_autograded(built, slug))
    assert all(v == 0 for v in g.scores.values()), g.scores


@SLOW
@needs_sandbox
@pytest.mark.parametrize("case", MISTAKE_CASES, ids=_mistake_id)
def test_mistake_loses_exactly_its_points(runs, built, case):
    slug, i = case
    g = runs[case]
    if isinstance(g, Exception):
        raise g
    mistakes = _mistakes(slug)
    mistake = mistakes[i]
    full = _autograded(built, slug)
    unknown = set(mistake["scores"]) - set(full)
    assert not unknown, f"scores for unknown questions {unknown}"
    own = {**full, **{k: float(v) for k, v in mistake["scores"].items()}}
    assert sum(own.values()) < sum(full.values()), "a mistake must cost points"
    # graded in one notebook with mistakes that affect other questions
    group = runs[("members", slug, i)]
    expected = dict(full)
    for j in group:
        expected.update({k: float(v) for k, v in mistakes[j]["scores"].items()})
    assert g.status == "graded", g.reason
    names = " + ".join(repr(mistakes[j]["name"]) for j in group)
    assert g.scores == expected, names


# ---------------------------------------------------------------- what students see


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


@SLOW
@pytest.mark.parametrize("slug", SLUGS)
def test_student_notebook_hides_solutions_and_hidden_tests(built, slug):
    secret = masters.secrets(masters.parse_master(masters.master_paths()[slug]))
    assert secret["solution"] and secret["hidden"], "nothing to look for"
    nb = json.loads((built / slug / "student" / f"{slug}.ipynb").read_text())
    seen = "\n".join(_strings(nb))
    page = pages._page(slug, built / slug)
    for kind, lines in secret.items():  # solution, hidden and reference lines
        for line in lines:
            assert line not in seen, f"{kind} line in the student notebook: {line}"
            assert line not in page, f"{kind} line on the assignment page: {line}"
    sources = ["".join(c["source"]) for c in nb["cells"]]
    for q in _autograded(built, slug):
        assert f'grader.check("{q}")' in sources
    assert any("NotImplementedError" in s or "= ..." in s for s in sources)
    assert "expected = dict(" not in page  # the values of the public tests: no page


@SLOW
@pytest.mark.parametrize("slug", SLUGS)
def test_rubrics_and_model_answers_go_to_the_instructors_folder_only(built, slug):
    m = masters.parse_master(masters.master_paths()[slug])
    notes = (built / slug / "rubric.md").read_text()
    rubric = (common.RUBRICS / f"{slug}.md").read_text().strip()
    assert rubric in notes
    answer = [line for q in m.manual for line in q.solution if len(line) > 40]
    assert answer and all(line in notes for line in answer)
    # no page of an HTML edition holds them: neither the assignment's page nor the
    # instructor's guide (both editions are built from these)
    page = pages._page(slug, built / slug)
    guide = (ROOT / "book" / "coursework" / "guide.md").read_text()
    for line in rubric.splitlines() + answer:
        if len(line) > 40:
            assert line not in guide and line not in page, line


@SLOW
@pytest.mark.parametrize("slug", SLUGS)
def test_solution_notebook_has_every_test(built, slug):
    secret = masters.secrets(masters.parse_master(masters.master_paths()[slug]))
    with zipfile.ZipFile(built / slug / f"{slug}-autograder.zip") as zf:
        tests = "".join(
            zf.read(n).decode() for n in zf.namelist() if n.startswith("tests/")
        )
    # otter stores the tests as doctests of the ast.unparse'd source (2e-3 becomes
    # 0.002): compare the words of each line in that form, without the prompts
    for line in secret["hidden"]:
        try:
            line = ast.unparse(ast.parse(line))
        except SyntaxError:
            pass  # part of a longer statement: compared as written
        words = re.findall(r"\w+", line)
        assert all(w in tests for w in words), line


@SLOW
@pytest.mark.parametrize("slug", SLUGS)
def test_autograder_zip_is_complete(built, slug):
    with zipfile.ZipFile(built / slug / f"{slug}-autograder.zip") as zf:
        names = set(zf.namelist())
        env = yaml.safe_load(zf.read("environment.yml"))
        wheels = [n for n in names if re.fullmatch(r"files/attnlib-.*\.whl", n)]
        assert len(wheels) == 1, sorted(names)
        with zf.open(wheels[0]) as fh, zipfile.ZipFile(fh) as wheel:
            assert "attnlib/__init__.py" in wheel.namelist()
    for q in _autograded(built, slug):
        assert f"tests/{q}.py" in names
    assert {"run_autograder", "setup.sh", "otter_config.json"} <= names
    deps = env["dependencies"]
    assert f"python={common.PYTHON_VERSION}" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    pins = common.pins()
    for pkg in common.RUNTIME:
        assert f"{pkg}=={pins[pkg]}" in pip
    assert f"{common.GRADESCOPE_FILES}/{Path(wheels[0]).name}" in pip


@SLOW
@pytest.mark.parametrize("slug", SLUGS)
def test_assignment_page(built, slug):
    page = pages._page(slug, built / slug)
    assert page.startswith("# ")
    assert f"{{download}}`{slug}.ipynb <../notebooks/{slug}.ipynb>`" in page
    for q in _info(built, slug)["questions"]:
        assert f"`{q['name']}`" in page
    assert "otter.Notebook" not in page and "```python\ngrader.check(" not in page
    # relative links of the master (to a chapter, say) still resolve from the page
    for _, target in pages.LINK.findall(page):
        if not pages.NOT_RELATIVE.match(target):
            path = common.GENERATED / "assignments" / target.partition("#")[0]
            assert path.resolve().exists(), f"{slug}: broken link {target}"
    assert "](../" not in page.replace("](../../../", ""), "a link left unrewritten"


def test_relink_points_from_the_page_to_the_same_file():
    page_dir = common.GENERATED / "assignments"
    text = "[C](../circle.md#modes), [W](https://x.org/a.md), [A](#q1), $[0, 1](x)$"
    out = pages._relink(text, page_dir)
    assert out == (
        "[C](../../../circle.md#modes), [W](https://x.org/a.md), [A](#q1), $[0, 1](x)$"
    )
    assert (
        page_dir / "../../../circle.md"
    ).resolve() == common.ROOT / "book" / "circle.md"


@SLOW
def test_grade_rejects_bad_arguments(built, tmp_path):
    with pytest.raises(common.CourseworkError, match="no build"):
        cwgrade.grade("no_such_assignment", tmp_path, build_root=built)
    if SLUGS:
        empty = tmp_path / "empty"
        empty.mkdir()
        with pytest.raises(common.CourseworkError, match="no file"):
            cwgrade.grade(SLUGS[0], empty, build_root=built)
        with pytest.raises(common.CourseworkError, match="folder"):
            cwgrade.grade(SLUGS[0], tmp_path / "missing", build_root=built)


# ---------------------------------------------------------------- student edition


def test_strip_solutions_keeps_exercises():
    text = (
        "# T\n\n```{exercise}\n:label: ex1\n\nDo it.\n```\n\n"
        "```{solution-start} ex1\n:class: dropdown\n```\n\nSecret words.\n\n"
        "```{code-cell} ipython3\nsecret = 1\n```\n\n```{solution-end}\n```\n\n"
        "::::{solution-start} ex2\n::::\n\nMore secrets.\n\n::::{solution-end}\n::::\n"
        "\n````{solution} ex3\nThird secret.\n````\n\nAfter.\n"
    )
    out = cwstudent.strip_solutions(text)
    assert "Do it." in out and "After." in out and "{exercise}" in out
    assert "ecret" not in out and "solution" not in out
    with pytest.raises(common.CourseworkError):
        cwstudent.strip_solutions("```{solution-start} a\n```\nno end\n")


def test_chapters_lose_every_solution():
    for chapter in sorted((ROOT / "book").glob("*.md")):
        text = chapter.read_text()
        out = cwstudent.strip_solutions(text)
        assert "{solution" not in out, chapter.name
        assert out.count("{exercise}") == text.count("{exercise}"), chapter.name


def test_student_edition_sources(tmp_path):
    cwstudent.student_sources(tmp_path)
    toc = yaml.safe_load((tmp_path / "_toc.yml").read_text())
    files = [c.get("file") for p in toc["parts"] for c in p["chapters"]]
    assert common.GUIDE not in files
    assert not (tmp_path / "book" / "assignments").exists()
    assert not (tmp_path / "book" / "coursework" / "guide.md").exists()
    assert "{solution-start}" not in (tmp_path / "book" / "modelling.md").read_text()
    assert (tmp_path / "book" / "_vendor").exists() == (ROOT / "book/_vendor").exists()
    # the book's pages and figures, and no tooling (scripts, the coursework tools)
    assert (tmp_path / "book" / "figures" / "readme.png").exists()
    scripts = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.py"))
    assert not scripts, scripts


def test_student_edition_kernels_show_figures(tmp_path, monkeypatch):
    """The student edition is built without MPLBACKEND, as `make book` is: with Agg
    the kernels would print "<Figure ...>" instead of showing the figures."""
    seen = {}

    def fake_run(cmd, env=None, **kw):
        seen["cmd"], seen["env"] = cmd, env
        return subprocess.CompletedProcess(cmd, 1)

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr(cwstudent.subprocess, "run", fake_run)
    with pytest.raises(common.CourseworkError, match="student edition"):
        cwstudent.student(out=tmp_path)
    assert "build" in seen["cmd"] and "-W" in seen["cmd"]
    assert "MPLBACKEND" not in seen["env"]
    assert str(common.ROOT) in seen["env"]["PYTHONPATH"]


def test_tools_and_the_grader_are_ruff_clean():
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    for args in (["check"], ["format", "--check"]):
        r = subprocess.run(
            [exe, *args, "tools", "gradebox"], cwd=ROOT, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stdout + r.stderr
