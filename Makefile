# The book and its library in one environment, .venv, built from requirements.txt.
#   make book   set up .venv (first time), build the HTML into _build/html
#   make test   set up .venv (first time), run the whole test suite (what CI runs)
#   make test-fast  the library, its doctests and the widgets only: no grading, no
#               book build, no chapter execution (pytest -m "not slow")
#   make test-cpus  the numerical tests again under the kernels of other CPUs
#   make lab    JupyterLab with jupytext: the .md chapters open as notebooks
#   make clean  remove the build output and the execution cache
#   make models train the small Transformers of the chapter on trained models
#               (attnlib.nets, JAX) and write their weights to book/models
# Coursework (lecturers; see the README, "Teaching with it", and the instructor's guide):
#   make assignments                          student notebooks, solutions, autograders
#   make grade A=<assignment> SUBMISSIONS=<folder> [TIMEOUT=120] [JOBS=n] [UNSAFE=1]
#              [FORCE=1] [REGRADE=<student>] [FOLLOW_LINKS=1]
#                                             gradebook, feedback (needs bubblewrap)
#   make student                              the student edition of the book
# The formulas are typeset when the book is built (KaTeX in Node.js, fetched once with
# npm with the page check's axe-core), so the built book renders with no network and
# no page needs a script to show its maths. The tools behind these targets are in tools/;
# make grade's grader is the package gradebox/ (its README says what it guarantees),
# installed into .venv beside attnlib.

PYTHON ?= python3
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed
# the compiled attention field, compiled once (below)
KERNELS := $(VENV)/.kernels
RUN    := PATH="$(BIN):$$PATH"

.PHONY: book test test-fast lab clean distclean env execution-cache

env: $(STAMP) $(KERNELS)

# --no-compile, then compileall: pip would compile every module one at a time,
# including the test suites of numpy and scipy; compileall compiles the rest on
# every CPU at once (about 20 s on two cores). Without it, where Python may not
# write bytecode (PYTHONDONTWRITEBYTECODE, or a read-only sandbox), every process
# would compile what it imports each time it starts: 3 s for import sympy instead
# of 0.3 s, in every kernel, test process and grading sandbox.
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile
COMPILE := $(BIN)/python -m compileall -q -j 0 -x '/(tests?|testing)/'
# uv installs the pinned requirements in a few seconds, several at a time (pip takes
# about a minute, one after another; the same packages either way). pip installs uv
# (pinned here); where uv fails (it does not read pip's configuration: an index or
# proxy set there only), pip installs the requirements instead.
UV_VERSION := 0.13.9
UV := $(BIN)/python -m uv pip install --quiet --native-tls --python $(BIN)/python

$(STAMP): requirements.txt pyproject.toml gradebox/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) uv==$(UV_VERSION)
	$(UV) -r requirements.txt || { echo "uv failed: pip installs the requirements"; \
	  $(PIP) -r requirements.txt; }
	$(PIP) --no-deps -e .
	$(PIP) --no-deps -e ./gradebox
	$(COMPILE) $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') > /dev/null
	$(COMPILE) attnlib tools gradebox/src > /dev/null
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	touch $(STAMP)

# The compiled attention field (attnlib/_compiled_numba.py, numba) compiled once, into
# numba's cache beside the module (attnlib/__pycache__; about a minute of CPU), so that
# the chapters executed side by side and the test processes load it (a fraction of a
# second) instead of each compiling it again.
$(KERNELS): $(STAMP) attnlib/_compiled.py attnlib/_compiled_numba.py
	$(RUN) $(BIN)/python -c "from attnlib import _compiled; _compiled.warm()"
	touch $(KERNELS)

VENDOR := book/_vendor/.complete

$(VENDOR): tools/vendor_assets.py
	$(BIN)/python -m tools.vendor_assets

# The execution cache keys on the chapters' code only: when attnlib or the pinned
# environment changes (requirements, the kernels' environment set here and by bookext),
# drop it so every chapter runs again against this checkout. The digest of those files
# and the rule are in tools/execution.py, which the student edition uses too.
# --execute then runs the chapters the cache lacks, one per CPU at a time, each cell
# within the book's execute.timeout (_config.yml), failing with the chapter, the cell
# and its source; the book build takes every chapter from the cache.
execution-cache: $(STAMP) $(KERNELS)
	env -u MPLBACKEND $(RUN) $(BIN)/python -m tools.execution _build --execute

# The kernels of the book must pick matplotlib's inline backend to show figures:
# ipykernel keeps any MPLBACKEND it inherits (Agg would leave only "<Figure ...>" text).
# --all reads every page again (outputs come from the cache), so that a warning, e.g.
# a cell writing to stderr, fails every build, not only the one that ran the cell.
book: $(STAMP) $(VENDOR) execution-cache
	env -u MPLBACKEND $(RUN) $(BIN)/jupyter-book build . --all -W -n --keep-going
	@echo
	@echo "The book is built. Open file://$(CURDIR)/_build/html/index.html"

# The chapter tests check the notebooks that make book executed when its execution
# cache is fresh for this checkout, and execute the chapters themselves otherwise
# (tools/execution.py): after make book, no chapter runs twice.
# The test files run in one process per CPU (pytest-xdist), each file in one process,
# so that a file's expensive fixtures (graded classes, make dist) are made once; the
# 25 slowest tests are named at the end.
# One BLAS thread per test process: the processes already fill the CPUs, and
# OpenBLAS's own threads (one per CPU in every process) would only wait for each
# other (tools/execution.py, share_cpus); kernels and sandboxes the tests start
# inherit it.
XDIST := -n logical --dist loadfile
ONE_BLAS_THREAD := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
test: $(STAMP) $(KERNELS)
	$(RUN) $(ONE_BLAS_THREAD) MPLBACKEND=Agg $(BIN)/python -m pytest $(XDIST) --durations=25

# Day-to-day: everything but the slow lanes (grading notebooks, building or executing
# the book), which make test and CI run.
test-fast: $(STAMP) $(KERNELS)
	$(RUN) $(ONE_BLAS_THREAD) MPLBACKEND=Agg $(BIN)/python -m pytest $(XDIST) -m "not slow"

# The numerical lane (make test-fast less the browser, build and grading tooling) once
# more under the kernels of other CPUs: OpenBLAS's Prescott kernels with numpy's
# baseline SIMD, and another OpenBLAS core this CPU runs (Haswell, Zen or SkylakeX);
# prints the kernels each lane ran and fails on any failure (tools/cpu_lanes.py).
.PHONY: test-cpus
test-cpus: $(STAMP) $(KERNELS)
	$(RUN) $(BIN)/python -m tools.cpu_lanes $(XDIST)

# The trained networks (book/models/<name>.npz and .json, committed): each trained from
# its recorded seed on this Python's standard-library docstrings, about 5 minutes in all
# on two cores (attnlib/nets/make_models.py lists them).
.PHONY: models
models: $(STAMP)
	$(RUN) $(BIN)/python -m attnlib.nets.make_models --out book/models

# Double-clicking a chapter (.md) in JupyterLab opens it as a notebook.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
ROOT_FLAG    := $(if $(filter 0,$(shell id -u)),--allow-root)

# binder/overrides.json (Binder uses it too): no autosave, so running a chapter never
# rewrites its .md; jupytext.toml keeps a save that changes nothing from changing it.
# binder/labextensions (Binder installs it too): the book's citations with the labels
# of its bibliography (tools/lab_citations.py). The chapters carry the rest: the
# macros and the folded solutions (tools/lab_view.py).
LAB_FLAGS := --ServerApp.root_dir=$(CURDIR) \
  --LabApp.extra_labextensions_path=$(CURDIR)/binder/labextensions $(ROOT_FLAG)

$(LAB_SETTINGS): $(STAMP) binder/overrides.json
	mkdir -p $(dir $@)
	cp binder/overrides.json $@

lab: $(STAMP) $(LAB_SETTINGS)
	PATH="$(BIN):$$PATH" $(BIN)/jupyter lab $(LAB_FLAGS)

clean:
	rm -rf _build

# ---------------------------------------------------------------------- coursework
# The logic is in tools/coursework/ (one module per command), the grader in the
# package gradebox/ (which also parses the masters). An assignment is rebuilt when
# its master, the build's code or attnlib changed ($? lists what is newer than the
# last build).
MASTERS   := $(wildcard book/assignments/*.md)
CW        := $(RUN) $(BIN)/python -m tools.coursework
CW_TOOLS  := $(addprefix tools/coursework/,build.py masters.py common.py) \
	$(addprefix gradebox/src/gradebox/,masters.py common.py)
CW_STAMP  := _build/assignments/.built
TIMEOUT   ?= 120
# every notebook is graded in a bubblewrap sandbox; UNSAFE=1 grades without one
# (only notebooks you trust), JOBS=n grades n at once (default: one per CPU);
# unchanged notebooks keep their grade (never a failed or timed-out one): FORCE=1
# regrades all, REGRADE=<student> one; links are refused unless FOLLOW_LINKS=1
GRADE_FLAGS = --timeout $(TIMEOUT) $(if $(JOBS),--jobs $(JOBS)) \
	$(if $(filter 1 yes true,$(UNSAFE)),--unsafe-no-sandbox) \
	$(if $(filter 1 yes true,$(FORCE)),--force) \
	$(if $(REGRADE),--regrade "$(REGRADE)") \
	$(if $(filter 1 yes true,$(FOLLOW_LINKS)),--follow-links)

.PHONY: assignments coursework-pages grade student clean-coursework

# the digest stamp lets the coursework tests reuse this build (tools/execution.py)
$(CW_STAMP): $(MASTERS) $(CW_TOOLS) $(shell find attnlib -name '*.py') | $(STAMP)
	@$(CW) build --changed $?
	$(BIN)/python -m tools.execution --assignments-built _build/assignments
	touch $@

assignments: $(CW_STAMP)

# The book's assignment pages are generated from the built student notebooks.
coursework-pages: $(CW_STAMP)
	$(CW) pages

book: coursework-pages

grade: $(CW_STAMP)
	@test -n "$(A)" -a -n "$(SUBMISSIONS)" || \
	  { echo "usage: make grade A=<assignment> SUBMISSIONS=<folder> [TIMEOUT=120]"; exit 2; }
	$(CW) grade "$(A)" "$(SUBMISSIONS)" $(GRADE_FLAGS)

# The student edition strips the chapters and takes the outputs of the cells it
# keeps from the book's execution cache: it runs nothing the book has run, and
# builds beside the book's own Sphinx build (make -j2 book student).
student: $(STAMP) $(VENDOR) coursework-pages execution-cache
	$(CW) student

clean: clean-coursework

clean-coursework:
	rm -rf book/coursework/generated

distclean: clean
	rm -rf $(VENV) book/_vendor

# ---------------------------------------------------------------------- release
# make dist: the sdist and wheel of attnlib in dist/, built offline in .venv (no
# isolated build environment to download) and checked with twine. The sdist holds the
# library, README, the licences and pyproject.toml only (MANIFEST.in); the version is
# attnlib/_version.py's. tests/test_release.py installs the wheel in a fresh venv.
.PHONY: dist

dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --sdist --wheel --outdir dist .
	rm -rf build attnlib.egg-info
	$(BIN)/twine check --strict dist/*

# ---------------------------------------------------------------------- readers
# make notebooks: the reader (with outputs) and student (no solutions) notebook of each
# chapter in _build/html/notebooks; make book writes them at the end of every build
# (bookext), this target rewrites them from the last build.
# make pdf: the book as a PDF, _build/latex/book.pdf, offline, with Debian's TeX
# (CONTRIBUTING.md lists them: latexmk texlive-xetex texlive-latex-extra ...); its text and
# LaTeX's log are checked (no unresolved reference, no missing glyph).
# make check-pages: the page check of both editions (tools/check_html.py: after make
# book and make student), with a screenshot of every chapter at 1366 px and 390 px in
# _build/screenshots/{reader,student} for review; fails if either edition fails.
# make test-binder: every notebook executed in a fresh venv holding only what
# binder/requirements.txt installs (about ten minutes; not part of CI).
.PHONY: notebooks pdf test-binder check-pages

notebooks: book
	$(BIN)/python -m bookext.notebooks _build

pdf: $(STAMP) $(VENDOR) execution-cache
	env -u MPLBACKEND $(RUN) $(BIN)/jupyter-book build . --builder pdflatex --all
	$(BIN)/python -m bookext.pdfcheck _build/latex/book.pdf

check-pages: $(STAMP)
	status=0; \
	$(BIN)/python -m tools.check_html _build/html \
	  --screenshots _build/screenshots/reader || status=1; \
	$(BIN)/python -m tools.check_html _build/student/html --same-as _build/html \
	  --screenshots _build/screenshots/student || status=1; \
	exit $$status

test-binder: notebooks
	$(RUN) MPLBACKEND=Agg ATTNLIB_TEST_BINDER=1 $(BIN)/python -m pytest \
	  tests/test_notebooks.py -k binder -rs

# ---------------------------------------------------------------------- publishing
# make release: what a course downloads, in release/ (bookext/release.py): attnlib's
# wheel and sdist (make dist, twine-checked), the site and the student edition as
# zips, every notebook in one zip with the wheel beside them, the PDF when TeX is
# installed (make pdf), SHA256SUMS; all of one version, checked at the end. It is
# built from a clean tree: commit first. RELEASING.md says where each
# file goes; .github/workflows/ does it on a tag.
.PHONY: release clean-tree

clean-tree:
	@git diff --quiet HEAD || { echo "make release: the tree has uncommitted changes"; exit 1; }

# the PDF first, so that the site the release zips links it (bookext/sitelinks.py copies
# a PDF of this version into the site when the book is built after it)
release: clean-tree dist
	$(if $(shell command -v latexmk),$(MAKE) pdf)
	$(MAKE) book student
	$(BIN)/python -m bookext.release --out release

# make lite: the notebooks in the browser, _build/html/lite (bookext/lite.py): a
# JupyterLite site with the Pyodide kernel, every notebook and attnlib's wheel beside
# them (the install cell takes it with piplite). It is built offline in its own
# environment (_build/lite-env, pinned below); opening it loads Pyodide from its CDN.
LITE_ENV  := _build/lite-env
LITE_PINS := jupyterlite-core==0.8.6 jupyterlite-pyodide-kernel==0.8.6 jupyter_server==2.21.1
.PHONY: lite

$(LITE_ENV)/.installed:
	$(PYTHON) -m venv $(LITE_ENV)
	$(LITE_ENV)/bin/python -m pip install --quiet --disable-pip-version-check $(LITE_PINS)
	touch $@

lite: book $(LITE_ENV)/.installed
	$(BIN)/python -m bookext.lite _build/html _build/lite-contents
	cd _build && lite-env/bin/jupyter lite build --contents lite-contents \
	  --output-dir html/lite
