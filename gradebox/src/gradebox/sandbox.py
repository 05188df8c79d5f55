"""A bubblewrap sandbox per submission (Debian's ``bubblewrap`` package).

The student's notebook runs in :mod:`.harness` inside a sandbox that has

- no network (own network namespace) and no view of other processes (own process
  namespace: every process the notebook starts dies with the sandbox, which dies
  with the tester that started it);
- a read-only view of the system (``/usr``), of Python and its environment, of
  the library under test (:attr:`.common.Settings.library`) and of the harness,
  and nothing else: not the course's files, the
  masters, the autograder, other submissions, the gradebook or a home directory;
- one writable folder, a ``tmpfs`` of bounded size at ``/tmp`` that disappears with
  the sandbox, and a private ``/dev/shm`` of bounded size (for multiprocessing);
  both bounded in files too (:attr:`Limits.inodes`): as root by the sandbox's
  control group, whose memory counts them; for a lecturer who is not root they
  are mounted with ``nr_inodes`` in a user and mount namespace of their own
  (``unshare``) before bubblewrap binds them (:func:`own_tmpfs` checks that this
  works: it needs unprivileged user namespaces);
- as root: an unprivileged user of its own (no capabilities), so that the limits on
  processes count this sandbox only;
- limits (:class:`Limits`) on CPU time, memory, file size, open files and processes;
- nothing shared with any other sandbox running at the same time (the other one of
  the same submission, or those of another submission graded beside it): its own
  writable files (the ``tmpfs`` above, into which the harness copies matplotlib's
  font list, so that matplotlib's cache and its lock file are private too), its
  own System V and POSIX IPC (``--unshare-ipc``), network (abstract Unix sockets
  included) and processes; and, since the read-only files above are the same
  files in every sandbox, a filter of system calls (``--seccomp``,
  :func:`seccomp_program`) that refuses what would signal through them: advisory
  locks (``flock``; ``fcntl``'s F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW),
  leases (F_SETLEASE), watches on their opens (``inotify``, ``fanotify``,
  ``F_NOTIFY``), the kernel's keyrings, and the calls that tell or change
  whether a page of a file is cached (``mincore``, ``cachestat``, ``preadv2``,
  ``posix_fadvise``, ``readahead``). Without it, the sandbox with the library
  answered the calls of the one without it through read locks on a file of the
  standard library (tests/assignments/attacks.py, "relay"). Chosen over running
  the sandboxes one after the other, which costs half the speed and still leaves
  two notebooks graded at once side by side. What the filter leaves is timing
  (how fast a read of a shared file is, how busy the machine is): a noisy
  channel, which it does not close.

The notebooks graded at once hold, each, two sandboxes and a tester: their memory
limits together are kept within the machine's memory (:func:`fit_memory`: fewer
notebooks at once, or lower limits on a machine too small for one).

Without bubblewrap, grading refuses to run unless the lecturer passes
``--unsafe-no-sandbox`` (then the harness runs as a plain subprocess with the same
limits, which protects the lecturer's files from nothing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path

from .common import GradingError, current

HERE = Path(__file__).resolve().parent
INSIDE = (
    "/opt/grader"  # where the harness, the library and caches appear in the sandbox
)
# an unprivileged user id per tester process (no account needed), far above the ids
# of real accounts
UID_BASE = 2_000_000_000
MAX_SLOTS = 8  # uids per grading process


def slot_uid(grader_pid: int, slot: int) -> int:
    """The user id of the sandboxes of tester ``slot`` of the grading process
    ``grader_pid``."""
    return UID_BASE + (grader_pid * MAX_SLOTS + slot % MAX_SLOTS) % 10**8


def absent_uid(uid: int) -> int:
    """The user id of the sandbox without the library beside the sandbox of ``uid``
    (its own: the process limit counts each sandbox alone)."""
    return uid - 10**8


INSTALL_HINT = (
    "bubblewrap (bwrap) is not installed: it isolates each submission while it is "
    "graded. Install it (Debian/Ubuntu: apt-get install bubblewrap) or, only for "
    "notebooks you trust, pass --unsafe-no-sandbox (the book's make grade: "
    "UNSAFE=1)"
)
BLOCKED_HINT = (
    "bubblewrap is installed ({exe}) but cannot create a sandbox: {error}. "
    "The system forbids the namespaces it needs. On Ubuntu 24.04 and later, "
    "AppArmor restricts unprivileged user namespaces: allow bwrap with a profile, "
    "a file /etc/apparmor.d/bwrap holding\n"
    "    abi <abi/4.0>,\n"
    "    include <tunables/global>\n"
    "    profile bwrap {exe} flags=(unconfined) {{\n"
    "      userns,\n"
    "    }}\n"
    "then `sudo apparmor_parser -r /etc/apparmor.d/bwrap`; or lift the restriction "
    "for the whole machine with `sudo sysctl -w "
    "kernel.apparmor_restrict_unprivileged_userns=0`. Elsewhere, check "
    "`sysctl kernel.unprivileged_userns_clone` (must be 1) and "
    "`user.max_user_namespaces` (must be > 0)"
)


@dataclass(frozen=True)
class Limits:
    """What one submission may use.

    ``cpu`` seconds of CPU run the notebook's cells and as many again answer the
    tests' calls (``call_cpu`` at most per call); the process is killed at
    ``2 cpu + 10`` seconds of CPU. Where the sandbox's control group counts CPU
    time (:class:`Cgroup`), the same holds for all its processes together: the
    sandbox is stopped at ``cpu + 10`` s until its cells have run, at ``2 cpu + 10``
    s in all (:class:`gradebox.tester.CpuWatch`). CPU time, not wall-clock
    time, so that a notebook is charged for its own computing only, however busy
    the machine. The tester
    gives up after ``wall`` seconds of wall-clock time (a notebook that sleeps):
    ``wall_s``, by default ``6 cpu + 120``.
    """

    cpu: float = 120.0
    call_cpu: float = 30.0
    memory_mb: int = 3072
    disk_mb: int = 256
    shm_mb: int = 256
    file_mb: int = 64
    # all the sandbox's processes together, and its files in /tmp and /dev/shm
    # (a control group, where the system lets the grader make one)
    sandbox_memory_mb: int = 4096
    # processes and threads (Linux counts both): a ThreadPoolExecutor of 24
    # threads, or a ProcessPoolExecutor, as the chapters use them, fits
    processes: int = 40
    open_files: int = 256
    # files and folders in /tmp and in /dev/shm each: an empty file takes no room
    # of a tmpfs's size but an inode of the kernel's memory
    inodes: int = 16384
    # the trusted tester: CPU seconds of one test case (decoding the answers it
    # reads and comparing them; the student's calls are counted above), and the
    # memory of the tester's process
    case_cpu: float = 60.0
    tester_memory_mb: int = 4096
    wall_s: float | None = None  # default 6 cpu + 120

    def __post_init__(self):
        for name, value in asdict(self).items():
            if value is not None and not value > 0:
                raise GradingError(f"limit {name} must be > 0, got {value}")

    @property
    def wall(self) -> float:
        return self.wall_s if self.wall_s is not None else 6 * self.cpu + 120


def machine_memory_mb() -> int | None:
    """The memory this machine gives the grader, in MB: its RAM (``MemTotal``),
    or less if the control group the grader runs in is limited; None if unknown."""
    sizes = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    sizes.append(int(line.split()[1]) // 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        groups = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        groups = []
    for line in groups:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and not controllers:
            files = [Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.max"]
        elif "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            files = [base / "memory.limit_in_bytes"]
        else:
            continue
        for f in files:
            try:
                value = f.read_text().strip()
            except OSError:
                continue
            if value.isdigit() and int(value) < 2**60:  # "max": no limit
                sizes.append(int(value) // 2**20)
    return min(sizes) if sizes else None


def job_memory_mb(limits: Limits) -> int:
    """The memory one notebook graded at a time may hold: its two sandboxes (with
    and without the library, run at the same time) and its tester."""
    return 2 * limits.sandbox_memory_mb + limits.tester_memory_mb


def fit_memory(
    jobs: int, limits: Limits, machine_mb: int | None
) -> tuple[int, Limits, str]:
    """Jobs and limits whose memory limits, summed over the jobs run at once,
    fit in ``machine_mb``; and a note for the lecturer ("" if nothing changed).

    Fewer jobs first (a notebook then gets the same limits, hence the same
    result, on any machine); a machine too small for one job gets lower limits.
    """
    per_job = job_memory_mb(limits)
    if machine_mb is None or jobs * per_job <= machine_mb:
        return jobs, limits, ""
    asked = (
        f"{jobs} notebook(s) at once would be allowed {jobs * per_job} MB (each: "
        f"two sandboxes of {limits.sandbox_memory_mb} MB and a tester of "
        f"{limits.tester_memory_mb} MB), more than this machine's {machine_mb} MB"
    )
    fit = machine_mb // per_job
    if fit >= 1:
        return fit, limits, f"memory: {asked}: grading {fit} at a time"
    scale = machine_mb / per_job
    sandbox_mb = max(64, int(limits.sandbox_memory_mb * scale))
    tester_mb = max(256, int(limits.tester_memory_mb * scale))
    smaller = replace(
        limits,
        sandbox_memory_mb=sandbox_mb,
        tester_memory_mb=tester_mb,
        memory_mb=min(limits.memory_mb, sandbox_mb),
        disk_mb=min(limits.disk_mb, sandbox_mb),
        shm_mb=min(limits.shm_mb, sandbox_mb),
    )
    return (
        1,
        smaller,
        f"memory: {asked}: grading 1 at a time, each sandbox limited to "
        f"{sandbox_mb} MB and the tester to {tester_mb} MB",
    )


# Run by ``unshare --user --map-root-user --mount`` (util-linux) for a lecturer
# who is not root: in a user and mount namespace of its own, mounts the sandbox's
# /tmp and /dev/shm as tmpfs bounded in size *and* in inodes (bubblewrap's
# ``--size`` bounds the size only, and a user without root has no control group
# whose memory would count the inodes), then runs bubblewrap, which binds them.
# Arguments: the scratch folder ($0), the two mounts' options, the command.
TMPFS_SCRIPT = (
    'mount -t tmpfs -o "$1" tmpfs "$0/tmp" && '
    'mount -t tmpfs -o "$2" tmpfs "$0/shm" && shift 2 && exec "$@"'
)


def tmpfs_options(size_mb: int, inodes: int) -> str:
    """The mount options of a writable tmpfs of the sandbox."""
    return f"size={size_mb * 2**20},nr_inodes={inodes},mode=1777"


def tmpfs_wrapper(scratch: str, limits: Limits) -> list[str]:
    """The command that mounts the bounded /tmp and /dev/shm of a sandbox in
    ``scratch/tmp`` and ``scratch/shm`` (in namespaces of its own) and runs what
    follows it (see :data:`TMPFS_SCRIPT`)."""
    unshare = shutil.which("unshare") or "unshare"
    return [
        unshare,
        "--user",
        "--map-root-user",
        "--mount",
        "--",
        "/bin/sh",
        "-c",
        TMPFS_SCRIPT,
        scratch,
        tmpfs_options(limits.disk_mb, limits.inodes),
        tmpfs_options(limits.shm_mb, limits.inodes),
    ]


@lru_cache(maxsize=1)
def own_tmpfs() -> str:
    """``""`` if, as this user (not root), a sandbox's /tmp can be bounded in
    inodes (:func:`tmpfs_wrapper` with bubblewrap inside it); else why not."""
    exe = probe()[0]
    if exe is None:
        return "no bubblewrap"
    if shutil.which("unshare") is None:
        return "no `unshare` (util-linux)"
    scratch = tempfile.mkdtemp(prefix="grader-probe-")
    try:
        for sub in ("tmp", "shm"):
            os.mkdir(os.path.join(scratch, sub))
        count = (
            "i=0; while [ $i -lt 64 ] && touch /tmp/f$i; do i=$((i+1)); done; echo $i"
        )
        cmd = tmpfs_wrapper(scratch, Limits(disk_mb=1, shm_mb=1, inodes=16))
        cmd += [exe, "--unshare-user", "--uid", str(os.getuid()), "--ro-bind", "/"]
        cmd += ["/", "--bind", f"{scratch}/tmp", "/tmp", "/bin/sh", "-c", count]
        r = subprocess.run(cmd, capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)[:300]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out = r.stdout.decode(errors="replace").strip()
    if r.returncode == 0 and out.isdigit() and int(out) < 64:
        return ""
    return (r.stderr.decode(errors="replace").strip() or f"exit {r.returncode}")[-300:]


@lru_cache(maxsize=1)
def probe() -> tuple[str | None, str]:
    """Path of a working ``bwrap`` and ``""``, or None and why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None, INSTALL_HINT
    probe = [exe, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net"]
    if os.geteuid() != 0:
        probe.append("--unshare-user")
    try:
        r = subprocess.run(
            [*probe, "true"], capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, BLOCKED_HINT.format(exe=exe, error=str(exc)[:300])
    if r.returncode == 0:
        return exe, ""
    error = r.stderr.decode(errors="replace").strip()[-300:] or f"exit {r.returncode}"
    return None, BLOCKED_HINT.format(exe=exe, error=error)


def bwrap() -> str | None:
    """Path of a working ``bwrap``, or None (:func:`probe` says why)."""
    return probe()[0]


bwrap.cache_clear = probe.cache_clear


def require(unsafe: bool) -> None:
    """Refuse to grade without a sandbox unless the lecturer said so."""
    exe, why = probe()
    if exe is None and not unsafe:
        raise GradingError(why)


def _user_tasks(uid: int) -> int:
    """Number of processes and threads of ``uid`` (for a relative process limit)."""
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


CGROUP_ROOT = Path("/sys/fs/cgroup")


@lru_cache(maxsize=1)
def cgroup_kind() -> str:
    """``"v2"`` or ``"v1"`` if this process may make control groups with memory and
    process limits (as root, on a system that mounts them writable), else ``""``
    (the limits then hold per process and per user, see :class:`Limits`)."""
    if os.geteuid() != 0:
        return ""
    controllers = CGROUP_ROOT / "cgroup.controllers"
    try:
        if {"memory", "pids"} <= set(controllers.read_text().split()):
            return "v2" if os.access(CGROUP_ROOT, os.W_OK) else ""
    except OSError:
        pass
    if all(
        os.access(CGROUP_ROOT / c, os.W_OK)
        and (CGROUP_ROOT / c / "cgroup.procs").exists()
        for c in ("memory", "pids")
    ):
        return "v1"
    return ""


#: the hierarchies of cgroup v1 a sandbox's group is made in: memory and processes,
#: which it needs, and CPU shares and CPU accounting where they are mounted writable
V1_NEEDED = ("memory", "pids")
V1_CPU = ("cpu", "cpuacct")


def _v1_cpu() -> bool:
    """Whether the v1 CPU hierarchies are mounted writable."""
    return all(
        os.access(CGROUP_ROOT / c, os.W_OK)
        and (CGROUP_ROOT / c / "cgroup.procs").exists()
        for c in V1_CPU
    )


def _v1_folders(name: str) -> list[Path]:
    """The folders of group ``name`` in each v1 hierarchy it is made in: one per
    hierarchy, so one for ``cpu`` and ``cpuacct`` where they are mounted together."""
    controllers = list(V1_NEEDED) + (list(V1_CPU) if _v1_cpu() else [])
    folders: dict[str, Path] = {}
    for c in controllers:
        folders.setdefault(
            os.path.realpath(CGROUP_ROOT / c),
            CGROUP_ROOT / c / "coursework-grader" / name,
        )
    return list(folders.values())


#: CPU weight of one process at nice 0 beside the sandboxes' parent group, in cgroup v1
#: (``cpu.shares``) and v2 (``cpu.weight``), and v2's largest weight
V1_SHARES, V2_WEIGHT, V2_MAX_WEIGHT = 1024, 100, 10000


def cpu_parent(kind: str) -> Path:
    """The folder of the sandboxes' parent group in the CPU hierarchy."""
    if kind == "v2":
        return CGROUP_ROOT / "coursework-grader"
    return Path(os.path.realpath(CGROUP_ROOT / "cpu")) / "coursework-grader"


def balance_cpu_weight(kind: str) -> int | None:
    """Give the sandboxes' parent group the CPU weight of one busy process per
    sandbox it holds (at least one), and return it; None where there is no CPU
    controller to weigh with.

    The scheduler weighs a group as a whole against its siblings: with the weight
    of a single process, all the sandboxes together got one process's share of
    the machine beside a test runner or a browser (each process of the root group
    weighs as much), and a grading run of two sandboxes went at half its pace on a
    busy machine. Called whenever a sandbox's group is made or removed; two
    testers that do so at once may leave it one group out of date until the next.
    """
    if kind not in ("v1", "v2") or (kind == "v1" and not _v1_cpu()):
        return None
    parent = cpu_parent(kind)
    try:
        groups = sum(1 for p in parent.iterdir() if p.is_dir())
        if kind == "v2":
            weight = min(V2_MAX_WEIGHT, V2_WEIGHT * max(1, groups))
            target = parent / "cpu.weight"
        else:
            weight, target = V1_SHARES * max(1, groups), parent / "cpu.shares"
        with open(target, "w") as fh:
            fh.write(str(weight))
    except OSError:
        return None
    return weight


class Cgroup:
    """A control group per sandbox: the memory of all its processes together (and
    of its files in tmpfs), their number, and their CPU time, however many
    processes it starts.

    Sandboxes share the CPUs equally (each group has the same CPU weight), so forty
    busy processes of one notebook weigh as much as one of another, and their
    parent group weighs as much as one busy process per sandbox
    (:func:`balance_cpu_weight`), so that the rest of the machine does not starve
    them; and the tester
    reads :meth:`cpu_seconds`, the CPU time of all the group's processes together,
    to stop a sandbox at its CPU limit (:class:`Limits`), which the limit per
    process alone does not see. Where the CPU controllers are missing,
    :meth:`cpu_seconds` is None and the limits per process hold alone.

    Made by :meth:`create` (None where the system does not allow it); the
    sandbox's first process enters it with :meth:`enter` before it starts anything.
    """

    def __init__(self, kind: str, name: str):
        self.kind, self.name = kind, name
        if kind == "v2":
            self.dirs = [CGROUP_ROOT / "coursework-grader" / name]
            self.usage = self.dirs[0] / "cpu.stat"
        else:
            self.dirs = _v1_folders(name)
            self.usage = CGROUP_ROOT / "cpuacct" / "coursework-grader" / name
            self.usage = self.usage / "cpuacct.usage" if _v1_cpu() else None
        self.memory_mb = 0

    @classmethod
    def create(cls, name: str, limits: Limits) -> "Cgroup | None":
        kind = cgroup_kind()
        if not kind:
            return None
        group = cls(kind, name)
        try:
            group._make(limits)
        except OSError:
            group.remove()
            return None
        return group

    def _write(self, path: Path, text: str) -> None:
        with open(path, "w") as fh:
            fh.write(text)

    def _make(self, limits: Limits) -> None:
        memory = limits.sandbox_memory_mb * 2**20
        self.memory_mb = limits.sandbox_memory_mb
        if self.kind == "v2":
            parent = self.dirs[0].parent
            parent.mkdir(exist_ok=True)
            for folder in (CGROUP_ROOT, parent):
                self._write(folder / "cgroup.subtree_control", "+memory +pids")
                try:  # equal CPU weights; without it, cpu.stat still counts
                    self._write(folder / "cgroup.subtree_control", "+cpu")
                except OSError:
                    pass
            self.dirs[0].mkdir()
            self._write(self.dirs[0] / "memory.max", str(memory))
            self._write(self.dirs[0] / "memory.swap.max", "0")
            self._write(self.dirs[0] / "pids.max", str(limits.processes))
            balance_cpu_weight(self.kind)
            return
        for folder in self.dirs:
            folder.mkdir(parents=True)
        balance_cpu_weight(self.kind)
        memory_dir = CGROUP_ROOT / "memory" / "coursework-grader" / self.name
        self._write(memory_dir / "memory.limit_in_bytes", str(memory))
        swap = memory_dir / "memory.memsw.limit_in_bytes"
        if swap.exists():
            self._write(swap, str(memory))
        pids_dir = CGROUP_ROOT / "pids" / "coursework-grader" / self.name
        self._write(pids_dir / "pids.max", str(limits.processes))

    def enter(self) -> None:
        """Put the calling process into the group (in the sandbox's first process,
        before it starts the sandbox)."""
        for folder in self.dirs:
            self._write(folder / "cgroup.procs", str(os.getpid()))

    def cpu_seconds(self) -> float | None:
        """CPU seconds used so far by all the group's processes together, those
        that ended included; None where the system does not count them."""
        try:
            if self.kind == "v2":
                stat = self.usage.read_text().split()
                return int(dict(zip(stat[::2], stat[1::2]))["usage_usec"]) / 1e6
            if self.usage is None:
                return None
            return int(self.usage.read_text()) / 1e9
        except (OSError, ValueError, KeyError):
            return None

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group for its memory limit."""
        try:
            if self.kind == "v2":
                events = (self.dirs[0] / "memory.events").read_text().split()
                return int(dict(zip(events[::2], events[1::2])).get("oom_kill", 0)) > 0
            memory_dir = CGROUP_ROOT / "memory" / "coursework-grader" / self.name
            control = (memory_dir / "memory.oom_control").read_text().split()
            fields = dict(zip(control[::2], control[1::2]))
            if "oom_kill" in fields:
                return int(fields["oom_kill"]) > 0
            return int((memory_dir / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def kill(self) -> None:
        """Kill every process of the group, until none is left (a process that
        forks while it is killed leaves a child: it is killed at the next pass)."""
        import signal
        import time

        for _ in range(50):
            left = False
            for folder in self.dirs:
                try:
                    pids = (folder / "cgroup.procs").read_text().split()
                except OSError:
                    continue
                for pid in pids:
                    left = True
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError, PermissionError):
                        pass
            if not left:
                break
            time.sleep(0.1)

    def remove(self) -> None:
        """Kill what is left in the group and remove it."""
        self.kill()
        for folder in self.dirs:
            try:
                folder.rmdir()
            except OSError:
                pass
        balance_cpu_weight(self.kind)


def _tester_alive(pid: int) -> bool:
    """Whether ``pid`` is a running tester (not a process that reused its number)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"gradebox.tester" in fh.read()
    except OSError:
        return False


def remove_stale_groups() -> list[str]:
    """Remove the control groups of testers that are gone, killing what is left in
    them: a tester killed with SIGKILL cannot remove its own. A group is named
    ``<tester pid>-<uid>`` (:func:`gradebox.tester._start`); others are left
    alone. Returns the names removed."""
    kind = cgroup_kind()
    if not kind:
        return []
    parents = (
        [CGROUP_ROOT / "coursework-grader"]
        if kind == "v2"
        else [folder.parent for folder in _v1_folders("-")]
    )
    names: set[str] = set()
    for parent in parents:
        try:
            names |= {p.name for p in parent.iterdir() if p.is_dir()}
        except OSError:
            continue
    removed = []
    for name in sorted(names):
        pid = name.split("-", 1)[0]
        if not pid.isdigit() or _tester_alive(int(pid)):
            continue
        Cgroup(kind, name).remove()
        removed.append(name)
    return removed


# what the sandbox's user runs inside a root's sandbox to forbid user namespaces
NESTED_NO_USERNS = ["--unshare-user", "--disable-userns", "--dev-bind", "/", "/", "--"]


@lru_cache(maxsize=1)
def disable_userns() -> bool:
    """Whether bubblewrap's ``--disable-userns`` works here, as the sandbox uses
    it: then the notebook cannot make user namespaces of its own (in which it
    could mount a tmpfs of any size). It needs bubblewrap 0.8 and unprivileged
    user namespaces; elsewhere the sandbox goes without it."""
    exe = probe()[0]
    if exe is None:
        return False
    if os.geteuid() == 0:
        cmd = [exe, "--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc"]
        cmd += ["--dev", "/dev", "--", *_drop_root(UID_BASE - 1)]
        cmd += [exe, *NESTED_NO_USERNS, "true"]
    else:
        cmd = [exe, "--unshare-user", "--disable-userns", "--ro-bind", "/", "/"]
        cmd += ["true"]
    try:
        r = subprocess.run(cmd, capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def _drop_root(uid: int) -> list[str]:
    """The command prefix that runs what follows as ``uid``, without capabilities."""
    return [
        "/usr/bin/setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]


def mpl_cache() -> str:
    """A folder holding matplotlib's font list, made once in the grader's cache
    (``<cache>/.grader-matplotlib``, :meth:`Settings.cache_dir`), so that each
    sandbox does not build it again (seconds per submission). Nothing is left in
    ``/tmp``."""
    return _mpl_cache(current().cache_dir() / ".grader-matplotlib")


@lru_cache(maxsize=4)
def _mpl_cache(MPL_CACHE: Path) -> str:
    if not any(MPL_CACHE.glob("fontlist*.json")):
        MPL_CACHE.parent.mkdir(parents=True, exist_ok=True)
        work = Path(
            tempfile.mkdtemp(prefix=".grader-matplotlib-", dir=MPL_CACHE.parent)
        )
        env = {**os.environ, "MPLCONFIGDIR": str(work), "MPLBACKEND": "Agg"}
        subprocess.run(
            [sys.executable, "-c", "import matplotlib.font_manager"],
            env=env,
            capture_output=True,
            check=False,
        )
        # readable by the sandbox's own user
        os.chmod(work, 0o755)
        for path in work.iterdir():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        try:
            work.rename(MPL_CACHE)
        except OSError:  # another tester made it first
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    return str(MPL_CACHE)


def _binds() -> list[str]:
    """Read-only binds of the system, Python and this environment."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in (
        "ld.so.cache",
        "ld.so.conf",
        "ld.so.conf.d",
        "localtime",
        "alternatives",
    ):
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    seen = set()
    for prefix in (sys.base_prefix, sys.prefix, sys.exec_prefix):
        real = os.path.realpath(prefix)
        for path in {prefix, real}:
            if path not in seen and not path.startswith("/usr/"):
                seen.add(path)
                args += ["--ro-bind", path, path]
    return args


def _parents(binds: list[str]) -> list[str]:
    """``--dir`` arguments that make the folders above every bind destination
    traversable (bwrap makes them private to root otherwise)."""
    out, made = [], {"/", "/tmp"}  # /tmp is the sandbox's own tmpfs
    for i, arg in enumerate(binds):
        if arg not in ("--ro-bind", "--ro-bind-try", "--symlink"):
            continue
        dest = Path(binds[i + 2])
        for parent in reversed(dest.parents):
            if str(parent) not in made:
                made.add(str(parent))
                out += ["--perms", "0755", "--dir", str(parent)]
    return out


# --- the filter of system calls (seccomp) -------------------------------------
#
# Each sandbox already has its own writable files (a tmpfs at /tmp and at
# /dev/shm), its own System V and POSIX IPC (--unshare-ipc), network (abstract
# Unix sockets included) and processes. What the sandboxes of a run still share
# are the read-only binds (/usr, Python, the environment, the harness, the library,
# matplotlib's font list), and through the kernel a file seen by two sandboxes
# carries signals even when nobody can write it: an advisory lock (flock, or a
# POSIX/OFD byte-range lock, both allowed on a file opened read-only; a read
# lock on byte N of a shared file is a byte another sandbox reads with F_GETLK),
# a lease, and a watch on its opens (inotify, fanotify, dnotify's F_NOTIFY).
# A sandbox with the library could so answer the calls of the sandbox without
# it (of the same notebook, or of another notebook graded at the same time).
# Those calls fail in every sandbox with EPERM; so do the kernel's keyrings
# (add_key, request_key, keyctl), which are shared by user id, and the calls
# that tell or change whether a page of a shared file is in the page cache
# without timing a read (mincore, cachestat, preadv2 with RWF_NOWAIT, and the
# eviction and prefetching of posix_fadvise and readahead): a page brought in
# by one sandbox would be a bit that another reads. Nothing a notebook of the book this
# grader was written for runs needs them: numpy, scipy, sympy, IPython (its history is
# off) and matplotlib (whose cache lock is a file made with O_EXCL in its private
# MPLCONFIGDIR) take no such lock, and Python reads files with read and pread.
# What is left is timing: how fast a read of a shared file is, or how busy the
# machine is, a channel noisy and slow, and one a page can carry once only
# (nothing can evict it again). Running the sandboxes one
# after the other would close the channel too, but halves the speed and still
# leaves two notebooks graded at once side by side: the filter closes it for
# any number of sandboxes at once.
#
# The program is classic BPF, assembled here (no dependency) for the machine's
# architecture; an unknown architecture fails closed (no sandbox is started),
# and a call made under another ABI than the native one (i386 or x32 on
# x86_64, arm32 on aarch64) kills the process.

#: system call numbers: x86_64 from arch/x86/entry/syscalls/syscall_64.tbl,
#: aarch64 from the generic table (include/uapi/asm-generic/unistd.h), which
#: has no inotify_init (inotify_init1 only)
SYSCALLS = {
    "x86_64": {
        "audit_arch": 0xC000003E,  # AUDIT_ARCH_X86_64
        "x32_bit": 0x40000000,  # __X32_SYSCALL_BIT: x32 calls are refused
        "fcntl": 72,
        "denied": {
            "flock": 73,
            "inotify_init": 253,
            "inotify_add_watch": 254,
            "inotify_init1": 294,
            "fanotify_init": 300,
            "fanotify_mark": 301,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "mincore": 27,
            "readahead": 187,
            "fadvise64": 221,
            "preadv2": 327,
            "pwritev2": 328,
            "cachestat": 451,
        },
    },
    "aarch64": {
        "audit_arch": 0xC00000B7,  # AUDIT_ARCH_AARCH64
        "x32_bit": None,
        "fcntl": 25,
        "denied": {
            "flock": 32,
            "inotify_init1": 26,
            "inotify_add_watch": 27,
            "fanotify_init": 262,
            "fanotify_mark": 263,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "mincore": 232,
            "readahead": 213,
            "fadvise64": 223,
            "preadv2": 286,
            "pwritev2": 287,
            "cachestat": 451,
        },
    },
}
#: fcntl commands refused (the same numbers on both): F_SETLK, F_SETLKW,
#: F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_NOTIFY. F_GETLK and F_OFD_GETLK
#: stay allowed: with no lock set anywhere they only ever answer "unlocked"
FCNTL_DENIED = {"F_SETLK": 6, "F_SETLKW": 7, "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38}
FCNTL_DENIED.update(F_SETLEASE=1024, F_NOTIFY=1026)
DENY_ERRNO = 1  # EPERM

_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO, _KILL = 0x7FFF0000, 0x00050000, 0x80000000
# offsets in struct seccomp_data: nr, arch, then args[6] of 8 bytes from 16; the
# low 32 bits of args[1] (fcntl's cmd, an unsigned int to the kernel) on these
# little-endian machines
_NR, _ARCH, _ARG1_LOW = 0, 4, 24


def seccomp_program(machine: str | None = None) -> bytes:
    """The filter (an array of ``struct sock_filter``) that bubblewrap installs
    with ``--seccomp``, for ``machine`` (default: this one's,
    :func:`platform.machine`). Raises :class:`GradingError` for an
    architecture whose system call numbers are not in :data:`SYSCALLS`."""
    import platform
    import struct

    machine = machine or platform.machine()
    table = SYSCALLS.get({"arm64": "aarch64", "amd64": "x86_64"}.get(machine, machine))
    if table is None:
        raise GradingError(
            f"the sandbox's filter of system calls knows x86_64 and aarch64, not "
            f"{machine!r}: grading refuses to run without it (add the numbers "
            f"to sandbox.SYSCALLS)"
        )
    # (code, jump-if-true label, jump-if-false label, k); labels are resolved
    code: list[tuple] = [
        (_LD_W_ABS, None, None, _ARCH),
        (_JEQ_K, None, "kill", table["audit_arch"]),
        (_LD_W_ABS, None, None, _NR),
    ]
    if table["x32_bit"]:
        code.append((_JGE_K, "kill", None, table["x32_bit"]))
    for nr in table["denied"].values():
        code.append((_JEQ_K, "deny", None, nr))
    code.append((_JEQ_K, "fcntl", None, table["fcntl"]))
    code.append((_RET_K, None, None, _ALLOW))
    labels = {"fcntl": len(code)}
    code.append((_LD_W_ABS, None, None, _ARG1_LOW))
    for cmd in FCNTL_DENIED.values():
        code.append((_JEQ_K, "deny", None, cmd))
    code.append((_RET_K, None, None, _ALLOW))
    labels["deny"] = len(code)
    code.append((_RET_K, None, None, _ERRNO | DENY_ERRNO))
    labels["kill"] = len(code)
    code.append((_RET_K, None, None, _KILL))
    out = b""
    for i, (op, jt, jf, k) in enumerate(code):
        jumps = [0 if j is None else labels[j] - i - 1 for j in (jt, jf)]
        assert all(0 <= j < 256 for j in jumps), jumps
        out += struct.pack("=HBBI", op, jumps[0], jumps[1], k)
    return out


SECCOMP_FD = 9  # the descriptor bubblewrap reads the filter from


def seccomp_file() -> str:
    """A file holding :func:`seccomp_program`, written once per grading process
    (``<cache>/.grader-seccomp/<digest>.bpf``): the command opens it as
    descriptor :data:`SECCOMP_FD` for bubblewrap, so that the command runs as it
    is, with no descriptor to pass."""
    return _seccomp_file(current().cache_dir() / ".grader-seccomp")


@lru_cache(maxsize=4)
def _seccomp_file(folder: Path) -> str:
    import hashlib

    program = seccomp_program()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(program).hexdigest()[:16]}.bpf"
    if not path.exists() or path.read_bytes() != program:
        work = folder / f".{os.getpid()}.tmp"
        work.write_bytes(program)
        os.chmod(work, 0o644)
        work.rename(path)
    return str(path)


def with_seccomp(cmd: list[str]) -> list[str]:
    """``cmd`` (which passes ``--seccomp`` :data:`SECCOMP_FD` to bubblewrap) run
    with the filter's file open as that descriptor."""
    return ["/bin/sh", "-c", f'exec "$@" {SECCOMP_FD}<"$0"', seccomp_file(), *cmd]


def library_copies() -> list[str]:
    """Folders named like the library under test on this Python's path other than
    the one graded with (an installed copy in the environment, which the sandbox
    binds)."""
    settings = current()
    if settings.library is None:
        return []
    package = settings.package()
    found = []
    for entry in sys.path:
        path = Path(entry or ".") / settings.library
        try:
            if path.is_dir() and path.resolve() != package:
                found.append(str(path))
        except OSError:
            continue
    return found


def command(
    slot_uid: int, limits: Limits, *, unsafe: bool, absent: bool = False
) -> tuple[list[str], dict]:
    """The command line and environment that start the harness for one submission;
    with ``absent``, in a sandbox without the library under test
    (:attr:`Settings.library`): its files are neither bound nor visible (an
    installed copy is covered by an empty folder), and the harness answers its
    import with a stand-in that has no code of the library."""
    course = current()
    package = course.package()
    settings = {
        "memory": limits.memory_mb * 2**20,
        "file_size": limits.file_mb * 2**20,
        "open_files": limits.open_files,
        "core": 0,
        "cpu_total": int(2 * limits.cpu + 10),
        "paths": [f"{INSIDE}/lib"],
        "mpl_cache": f"{INSIDE}/mplcache",
        "absent": absent,
        "library": course.library,
    }
    if absent:
        settings["paths"] = []
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/.matplotlib",
        "IPYTHONDIR": "/tmp/.ipython",
        "PYTHONHASHSEED": "0",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # one core per submission: grading runs several at once
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    python = [sys.executable, "-I"]
    exe, why = probe()
    if exe is None:
        if not unsafe:
            raise GradingError(why)
        # no isolation: the harness and the library from where they are, same limits
        settings.update(
            paths=[] if absent or package is None else [str(package.parent)],
            mpl_cache=mpl_cache(),
            processes=_user_tasks(os.getuid()) + limits.processes,
        )
        scratch = tempfile.mkdtemp(prefix="grader-unsafe-")
        env.update(HOME=scratch, TMPDIR=scratch, MPLCONFIGDIR=f"{scratch}/.mpl")
        env["IPYTHONDIR"] = f"{scratch}/.ipython"
        return [*python, str(HERE / "harness.py"), _json(settings)], {
            **env,
            "GRADER_SCRATCH": scratch,
        }
    binds = _binds() + [
        "--ro-bind",
        str(HERE / "harness.py"),
        f"{INSIDE}/harness.py",
        "--ro-bind",
        str(HERE / "wire.py"),
        f"{INSIDE}/wire.py",
        "--ro-bind",
        mpl_cache(),
        f"{INSIDE}/mplcache",
    ]
    if not absent and package is not None:
        binds += ["--ro-bind", str(package), f"{INSIDE}/lib/{course.library}"]
    # the one writable folder, for everybody (the sandbox's user is not root); it is
    # mounted before the binds, so that a checkout or environment that lives under
    # /tmp is bound over it instead of hidden by it. As root the sandbox's control
    # group counts its inodes in its memory; a lecturer who is not root has none,
    # and mounts it, bounded in inodes too, before bubblewrap runs (own_tmpfs)
    scratch = None
    if os.geteuid() != 0 and not own_tmpfs():
        scratch = tempfile.mkdtemp(prefix="grader-sandbox-")
        for sub in ("tmp", "shm"):
            os.mkdir(os.path.join(scratch, sub))
        args = [exe, "--bind", f"{scratch}/tmp", "/tmp"]
    else:
        args = [exe, "--perms", "1777", "--size", str(limits.disk_mb * 2**20)]
        args += ["--tmpfs", "/tmp"]
    args += [*_parents(binds), *binds]
    if absent:
        for copy in library_copies():
            # an empty, read-only folder over an installed copy of the library
            args += ["--perms", "0555", "--tmpfs", copy, "--remount-ro", copy]
    args += ["--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp"]
    # a private, sized /dev/shm, writable by the sandbox's user (multiprocessing's
    # locks and queues live there)
    if scratch is not None:
        args += ["--bind", f"{scratch}/shm", "/dev/shm"]
    else:
        args += ["--perms", "1777", "--size", str(limits.shm_mb * 2**20)]
        args += ["--tmpfs", "/dev/shm"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    # no lock, lease or watch on a file another sandbox sees (SYSCALLS)
    args += ["--seccomp", str(SECCOMP_FD)]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    args += ["--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        # an unprivileged user of its own: no capabilities, and the process limit
        # counts the processes of this sandbox only
        settings["processes"] = limits.processes
    else:
        settings["processes"] = _user_tasks(os.getuid()) + limits.processes
    if os.geteuid() == 0:
        args += ["--", *_drop_root(slot_uid)]
        if disable_userns():
            # a second bubblewrap, run by the sandbox's user inside the first,
            # in a user namespace of its own in which no further one can be made
            args += [exe, *NESTED_NO_USERNS]
    else:
        args.insert(1, "--unshare-user")
        if disable_userns():
            args.insert(2, "--disable-userns")
        if scratch is not None:
            # bubblewrap runs as the namespace's root: the sandbox's user is the
            # lecturer's, as without the wrapper
            args[1:1] = ["--uid", str(os.getuid()), "--gid", str(os.getgid())]
            args[:0] = tmpfs_wrapper(scratch, limits)
            env["GRADER_SCRATCH"] = scratch  # removed by the tester at the end
        args.append("--")
    args += [*python, f"{INSIDE}/harness.py", _json(settings)]
    return with_seccomp(args), env


def _json(obj) -> str:
    import json

    return json.dumps(obj, separators=(",", ":"))
