"""The testers (:mod:`.tester`) as long-lived worker processes, one per notebook
graded at a time: their imports and the master's setup are paid once per run.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import sandbox, wire
from .common import GradingError, current

# the folder that holds the package gradebox (the tester imports it)
PACKAGE_PARENT = Path(__file__).resolve().parents[1]


class Worker:
    """A tester process (:mod:`.tester`) that grades one notebook at a time."""

    def __init__(self, master: Path, unsafe: bool):
        self.master, self.unsafe = master, unsafe
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the tester process (call from a thread that outlives it: the
        kernel kills the tester when the thread that started it ends)."""
        settings = current()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            dict.fromkeys(
                [
                    *settings.pythonpath,
                    str(PACKAGE_PARENT),
                    *filter(None, env.get("PYTHONPATH", "").split(os.pathsep)),
                ]
            )
        )
        env.setdefault("MPLBACKEND", "Agg")
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gradebox.tester",
                str(self.master),
                str(os.getpid()),
                settings.to_json(),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # the master's setup runs there: the course's first folder on the
            # path (a checkout), or the master's own folder
            cwd=(settings.pythonpath or [str(Path(self.master).resolve().parent)])[0],
            env=env,
            start_new_session=True,  # Ctrl-C reaches the grading process only
        )

    def wait_ready(self) -> None:
        ready = self._recv(600)
        if not isinstance(ready, dict) or ready.get("op") != "ready":
            message = ready.get("message", "") if isinstance(ready, dict) else ready
            self.stop()
            raise GradingError(f"the tester did not start:\n{message}")

    def _recv(self, timeout: float):
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                try:
                    return wire.read_frame(fd)
                except (EOFError, OSError, wire.WireError) as exc:
                    return f"the tester stopped: {exc}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def grade(self, task: dict, timeout: float) -> dict:
        if not self.alive:
            self.start()
        try:
            wire.write_frame(self.proc.stdin.fileno(), task)
        except wire.WireError as exc:  # checked before anything is written
            return {
                "status": "failed",
                "reason": f"the notebook's code is too large to send to its "
                f"sandbox ({exc})",
            }
        except OSError as exc:
            self.stop()
            return {"status": "failed", "reason": f"the tester stopped: {exc}"}
        reply = self._recv(timeout)
        if not isinstance(reply, dict):
            self.stop()  # hung or crashed: the next task starts a fresh one
            why = reply or f"no result after {timeout:g} s"
            kind = "timeout" if reply is None else "failed"
            return {"status": kind, "reason": str(why)}
        return reply

    def stop(self) -> None:
        """Kill the tester and whatever its sandboxes still run.

        A sandbox dies with its tester (bubblewrap's ``--die-with-parent``); yet
        once, after a Ctrl-C, a sandbox of the killed tester was still running 30 s
        later. A bubblewrap whose parent dies just after starting it, before it has
        asked the kernel for the parent-death signal, never gets that signal
        (bubblewrap's issue 633, open). The tester now has the kernel's request made
        before bubblewrap starts (:func:`tester._start`); as a second guard, once
        the tester is gone, the control groups of its sandboxes are emptied and
        removed here, as the next tester would do
        (:func:`sandbox.remove_stale_groups`).
        """
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        else:
            sandbox.remove_stale_groups()
        self.proc = None


# Testers stay up between runs of one process (their imports and the master's setup
# are paid once); each dies with this process at the latest.
_POOL: dict[tuple[str, bool], list[Worker]] = {}


def _workers(master: Path, unsafe: bool, count: int) -> list[Worker]:
    """``count`` ready testers of ``master``, started from this thread."""
    pool = _POOL.setdefault((str(Path(master).resolve()), unsafe), [])
    pool[:] = [w for w in pool if w.alive]
    new = [Worker(master, unsafe) for _ in range(count - len(pool))]
    for w in new:
        w.spawn()
    try:
        for w in new:
            w.wait_ready()
    except BaseException:
        for w in new:
            w.stop()
        raise
    pool.extend(new)
    return pool[:count]


def _stop_workers() -> None:
    for pool in _POOL.values():
        for w in pool:
            w.stop()
        pool.clear()


atexit.register(_stop_workers)
