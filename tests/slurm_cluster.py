"""A throw-away single-node SLURM cluster (with a fake GPU) for the test suite.

Everything lives in a private temporary directory: a munge key and ``munged``
on its own socket, a ``slurm.conf``/``gres.conf`` pair, ``slurmctld`` and
``slurmd`` on non-default ports, and all state/spool/log/pid files.  Nothing
of the system's SLURM or munge setup is used or touched, and only processes
started here are ever signalled.

The node advertises one GPU (``Gres=gpu:1``) backed by a character device
node created with :func:`os.mknod` (major 195, like ``/dev/nvidia0``), so
SLURM sets ``CUDA_VISIBLE_DEVICES`` for jobs that request a GPU (and unsets
it for the others).  No real GPU is involved; there are no cgroups and no
accounting database (``sacct``/``sacctmgr`` are installed but fail with
"accounting storage is disabled"; use ``squeue``, ``scontrol`` or
:meth:`SlurmCluster.job_records`).

Typical use::

    with SlurmCluster() as cluster:
        subprocess.run(["sbatch", "--wait", "-p", "gpu", "--gpus=1", "job.sh"],
                       env=cluster.env, check=True)
        print(cluster.job_records())

Install the Debian packages with ``.ci/install-slurm.sh`` (needs root).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["SlurmCluster", "SlurmClusterError", "slurm_unavailable_reason"]

#: Daemons and client commands the cluster needs.
REQUIRED_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo")

# Daemons usually live in /usr/sbin, which may be missing from a user's PATH.
_SEARCH_PATH = os.pathsep.join(
    [os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/local/sbin"]
)

#: Client commands wrapped in ``<workdir>/bin`` (see ``_write_client_wrappers``).
_CLIENTS = ("srun", "sbatch", "salloc", "squeue", "scontrol", "sinfo", "scancel",
            "sacct", "sstat", "sprio", "sshare", "sacctmgr", "sattach", "sbcast")

#: Device numbers of /dev/nvidia0 (NVIDIA's character-device major is 195).
_FAKE_GPU_MAJOR, _FAKE_GPU_MINOR = 195, 0


class SlurmClusterError(RuntimeError):
    """Raised when the private cluster cannot be started."""


def _which(name: str) -> str | None:
    return shutil.which(name, path=_SEARCH_PATH)


def slurm_unavailable_reason() -> str | None:
    """Explain why a private SLURM cluster cannot be run here, or return None.

    Checks that we run as root (slurmd must be able to start jobs as any
    user and the daemons run as ``SlurmUser=root``), that the munge and SLURM
    daemons and client commands are installed (see ``.ci/install-slurm.sh``)
    and that character device nodes can be created (the fake GPU).  The
    returned text is meant for ``pytest.skip``.
    """
    if not hasattr(os, "geteuid") or os.name != "posix":
        return "SLURM test cluster needs a POSIX system"
    if os.geteuid() != 0:
        return "SLURM test cluster needs root (daemons run as SlurmUser=root)"
    missing = [b for b in REQUIRED_BINARIES if _which(b) is None]
    if missing:
        return (
            "SLURM/munge not installed (missing: " + ", ".join(missing) + "); "
            "run .ci/install-slurm.sh"
        )
    try:
        with tempfile.TemporaryDirectory(prefix="slurm-mknod-check-") as tmp:
            node = os.path.join(tmp, "nvidia0")
            os.mknod(
                node,
                0o666 | stat.S_IFCHR,
                os.makedev(_FAKE_GPU_MAJOR, _FAKE_GPU_MINOR),
            )
    except OSError as exc:
        return f"cannot create a character device for the fake GPU (mknod: {exc})"
    return None


def _free_ports(count: int) -> list[int]:
    """Return ``count`` distinct TCP ports that are currently free."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("0.0.0.0", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent_preexec():
    """Return a ``preexec_fn`` making a daemon get SIGTERM when we die.

    A safety net for a test run killed without cleanup (SIGKILL, timeout):
    Linux's ``PR_SET_PDEATHSIG`` signals the child when the thread that
    started it exits.  Returns None where unsupported.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        os.setsid()  # own session: terminal Ctrl-C does not reach the daemon
        prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # parent already gone
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _mem_total_mb() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 2048


# "Key=Value Key2=Value with spaces Key3=..." -> pairs.  A new key starts at
# whitespace followed by an identifier-ish token and "=".  Values such as
# "cpu=1,mem=1G,gres/gpu=1" contain "=" but no whitespace, so stay intact.
_KV_RE = re.compile(r"([A-Za-z][\w:/.-]*)=(.*?)(?=\s+[A-Za-z][\w:/.-]*=|\s*$)")


def _parse_kv_line(line: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _KV_RE.finditer(line.strip())}


def _gpu_count_from_tres(*values: str | None) -> int:
    """Number of GPUs in TRES/GRES strings like ``cpu=1,gres/gpu=1`` or ``gres:gpu:1``."""
    for value in values:
        if not value or value == "(null)":
            continue
        m = re.search(r"gres[/:]gpu(?::[\w.-]+)?[=:](\d+)", value)
        if m:
            return int(m.group(1))
        if re.search(r"gres[/:]gpu\b", value):
            return 1
    return 0


class SlurmCluster:
    """A private single-node SLURM cluster with partitions ``cpu`` and ``gpu``.

    Use as a context manager (or call :meth:`start` / :meth:`stop`).  On entry
    it creates a temporary directory, starts ``munged``, ``slurmctld`` and
    ``slurmd`` from there and waits until the node is idle; on exit (or when
    startup fails) it terminates exactly the processes it started (SIGTERM,
    then SIGKILL after ``stop_timeout`` seconds) and removes the directory
    unless ``keep_dir`` is true.

    Attributes available after :meth:`start`:

    ``env``
        ``os.environ`` without inherited ``SLURM_*``/``SBATCH_*`` variables,
        plus ``SLURM_CONF`` and ``MUNGE_SOCKET``, and with ``<workdir>/bin``
        (client wrappers that pin ``SLURM_CONF``) first on ``PATH``; pass it
        to ``sbatch``/``squeue``/``snakemake`` subprocesses.  Jobs inherit it
        (sbatch's default ``--export=ALL``).
    ``conf_path``, ``gres_conf_path``, ``jobcomp_path``, ``munge_socket``
        Paths inside ``workdir``.
    ``node_name``, ``cpus``, ``real_memory_mb``, ``ports``
        What was configured.
    """

    cluster_name = "biokernels"
    node_name = "biokernels-node"
    partitions = ("cpu", "gpu")

    def __init__(
        self,
        *,
        start_timeout: float = 60.0,
        stop_timeout: float = 15.0,
        keep_dir: bool = False,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        """Configure (but do not start) a cluster.

        ``start_timeout`` bounds the wait for the node to become idle,
        ``stop_timeout`` the wait between SIGTERM and SIGKILL per daemon.
        ``keep_dir`` keeps the temporary directory (logs) after stopping;
        ``base_dir`` is where the temporary directory is created.
        """
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.keep_dir = keep_dir
        self.base_dir = None if base_dir is None else str(base_dir)
        self.workdir: Path | None = None
        self.env: dict[str, str] = {}
        self.cpus = _cpu_count()
        # Stay under the machine's memory so slurmd never drains the node
        # for "Low RealMemory".
        self.real_memory_mb = max(256, int(_mem_total_mb() * 0.9))
        self.ports: dict[str, int] = {}
        self._procs: dict[str, subprocess.Popen] = {}
        self._log_handles: list = []
        self._started = False

    # ------------------------------------------------------------------ API
    def __enter__(self) -> "SlurmCluster":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def pids(self) -> dict[str, int]:
        """PIDs of the daemons this object started, by daemon name."""
        return {name: p.pid for name, p in self._procs.items()}

    def start(self) -> "SlurmCluster":
        """Create the configuration, start the daemons and wait for an idle node.

        Raises :class:`SlurmClusterError` (after stopping whatever was
        already started) if anything fails or the node is not idle within
        ``start_timeout`` seconds.  The message includes the daemon logs.
        """
        if self._started:
            return self
        reason = slurm_unavailable_reason()
        if reason is not None:
            raise SlurmClusterError(reason)
        self._started = True
        try:
            self._prepare_dir()
            self._start_munged()
            self._write_configs()
            self.env = self._make_env()
            self._start_daemon(
                "slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf_path)]
            )
            self._start_daemon(
                "slurmd",
                [_which("slurmd"), "-D", "-f", str(self.conf_path), "-N", self.node_name],
            )
            self._wait_for_idle_node()
            self._wait_for_scheduler()
        except BaseException as exc:
            logs = self.logs()
            self.stop()
            if isinstance(exc, SlurmClusterError):
                raise SlurmClusterError(f"{exc}\n{logs}") from None
            raise
        return self

    def stop(self) -> None:
        """Cancel remaining jobs, stop the daemons started here, clean up.

        Only the PIDs recorded by :meth:`start` are signalled, in reverse
        start order (slurmd, slurmctld, munged).  Safe to call repeatedly.
        """
        if self._procs.get("slurmctld") is not None and self._procs["slurmctld"].poll() is None:
            self._cancel_jobs()
        for name in reversed(list(self._procs)):
            self._terminate(name, self._procs[name])
        self._procs.clear()
        for fh in self._log_handles:
            try:
                fh.close()
            except OSError:
                pass
        self._log_handles.clear()
        if self.workdir is not None and not self.keep_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self._started = False

    def run(self, *args: str, check: bool = True, timeout: float = 120.0,
            **kwargs) -> subprocess.CompletedProcess:
        """Run a command (e.g. ``sbatch``) against this cluster, capturing text output."""
        kwargs.setdefault("env", self.env)
        return subprocess.run(list(args), check=check, timeout=timeout,
                              capture_output=True, text=True, **kwargs)

    def job_records(self) -> list[dict[str, str | int]]:
        """Return the scheduler's records of jobs this cluster has run.

        Merges ``scontrol show job -o -d`` (finished jobs stay visible for
        ``MinJobAge`` = 3600 s) with the ``jobcomp/filetxt`` file (one line
        per finished job).  Each dict holds every field SLURM reported, as
        strings, and at least:

        ``JobId``, ``JobName``, ``Partition``, ``JobState``
            As SLURM reports them.
        ``AllocGRES``
            The job's allocated GRES from ``scontrol -d`` (``JOB_GRES``),
            e.g. ``gpu:1``; ``""`` when none.
        ``AllocTRES``
            The allocated TRES, e.g. ``cpu=1,node=1,billing=1`` plus
            ``gres/gpu=1`` for GPU jobs.  SLURM 22.05 refuses
            ``AccountingStorageTRES=gres/gpu`` without slurmdbd, so its own
            TRES string never lists GPUs here; the ``gres/gpu=N`` term is
            added from ``AllocGRES`` (the raw value stays in ``TRES``).
        ``Gpus``
            Number of allocated GPUs (int, 0 for CPU jobs).

        Sorted by numeric JobId.
        """
        records: dict[str, dict[str, str | int]] = {}
        # jobcomp first, so scontrol's more detailed fields win.
        if self.jobcomp_path.exists():
            for line in self.jobcomp_path.read_text(errors="replace").splitlines():
                if line.strip():
                    rec: dict[str, str | int] = dict(_parse_kv_line(line))
                    rec.setdefault("JobName", str(rec.get("Name", "")))
                    rec.setdefault("TRES", str(rec.get("Tres", "")))
                    records[str(rec.get("JobId"))] = rec
        out = subprocess.run(
            [_which("scontrol"), "show", "job", "-o", "-d"],
            env=self.env, capture_output=True, text=True, timeout=30, check=False,
        )
        if out.returncode == 0:
            for line in out.stdout.splitlines():
                if line.startswith("JobId="):
                    rec = dict(_parse_kv_line(line))
                    records.setdefault(str(rec.get("JobId")), {}).update(rec)
        result = []
        for rec in records.values():
            gres = str(rec.get("JOB_GRES", ""))
            rec["AllocGRES"] = "" if gres in ("", "(null)") else gres
            tres = str(rec.get("AllocTRES") or rec.get("TRES", ""))
            gpus = _gpu_count_from_tres(tres, rec["AllocGRES"] and "gres:" + rec["AllocGRES"])
            if gpus and "gres/gpu" not in tres:
                tres = f"{tres},gres/gpu={gpus}" if tres else f"gres/gpu={gpus}"
            rec["AllocTRES"] = tres
            rec["Gpus"] = gpus
            result.append(rec)
        result.sort(key=lambda r: int(str(r.get("JobId", "0")).split("_")[0] or 0))
        return result

    def logs(self, tail: int = 40) -> str:
        """The last ``tail`` lines of every daemon log, for error messages."""
        if self.workdir is None:
            return ""
        parts = []
        for log in sorted((self.workdir / "log").glob("*.log")):
            try:
                lines = log.read_text(errors="replace").splitlines()[-tail:]
            except OSError:
                continue
            parts.append(f"--- {log.name} ---\n" + "\n".join(lines))
        return "\n".join(parts)

    # ------------------------------------------------------------ internals
    def _prepare_dir(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="slurm-cluster-", dir=self.base_dir))
        w = self.workdir
        # The workdir must be traversable for job processes; munged insists
        # that its own directories are not group/world writable.
        os.chmod(w, 0o755)
        for sub in ("bin", "etc", "state", "spool", "log", "run", "dev", "munge"):
            (w / sub).mkdir()
        os.chmod(w / "munge", 0o755)  # socket must be reachable by job users
        self.conf_path = w / "etc" / "slurm.conf"
        self.gres_conf_path = w / "etc" / "gres.conf"
        self.jobcomp_path = w / "log" / "jobcomp.txt"
        self.munge_socket = w / "munge" / "munge.socket"
        self.gpu_device = w / "dev" / "nvidia0"
        os.mknod(
            self.gpu_device,
            0o666 | stat.S_IFCHR,
            os.makedev(_FAKE_GPU_MAJOR, _FAKE_GPU_MINOR),
        )

    def _open_log(self, name: str):
        fh = open(self.workdir / "log" / f"{name}.stdout.log", "ab")
        self._log_handles.append(fh)
        return fh

    def _start_daemon(self, name: str, argv: list[str]) -> subprocess.Popen:
        fh = self._open_log(name)
        preexec = _die_with_parent_preexec()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=self.env or None,
            cwd=self.workdir,
            # Own session, so a terminal Ctrl-C does not hit the daemons
            # before stop() can cancel jobs and stop them in order.
            start_new_session=preexec is None,
            preexec_fn=preexec,
        )
        self._procs[name] = proc
        return proc

    def _start_munged(self) -> None:
        m = self.workdir / "munge"
        key = m / "munge.key"
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(1024))
        self._start_daemon(
            "munged",
            [
                _which("munged"),
                "--foreground",
                "--force",  # tolerate e.g. a group-writable /tmp ancestor
                f"--socket={self.munge_socket}",
                f"--key-file={key}",
                f"--pid-file={m / 'munged.pid'}",
                f"--log-file={self.workdir / 'log' / 'munged.log'}",
                f"--seed-file={m / 'munged.seed'}",
                "--num-threads=2",
            ],
        )
        deadline = time.monotonic() + 15
        while not self.munge_socket.exists():
            if self._procs["munged"].poll() is not None:
                raise SlurmClusterError(
                    f"munged exited with code {self._procs['munged'].returncode}"
                )
            if time.monotonic() > deadline:
                raise SlurmClusterError("munged did not create its socket within 15 s")
            time.sleep(0.05)

    def _write_configs(self) -> None:
        w = self.workdir
        ctld_port, slurmd_port = _free_ports(2)
        self.ports = {"slurmctld": ctld_port, "slurmd": slurmd_port}
        conf = f"""\
# Generated by tests/slurm_cluster.py -- private single-node test cluster.
ClusterName={self.cluster_name}
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={w / 'state'}
SlurmdSpoolDir={w / 'spool'}
SlurmctldPidFile={w / 'run' / 'slurmctld.pid'}
SlurmdPidFile={w / 'run' / 'slurmd.pid'}
SlurmctldLogFile={w / 'log' / 'slurmctld.log'}
SlurmdLogFile={w / 'log' / 'slurmd.log'}
SlurmctldDebug=info
SlurmdDebug=info
SchedulerType=sched/backfill
# Start batch jobs right away (default delays cost ~2 s per job).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={self.jobcomp_path}
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=3600
KillWait=5
InactiveLimit=0
SlurmdTimeout=300
SlurmctldTimeout=300
GresTypes=gpu
NodeName={self.node_name} NodeAddr=127.0.0.1 NodeHostname=localhost CPUs={self.cpus} RealMemory={self.real_memory_mb} Gres=gpu:1 State=UNKNOWN
# Both partitions share the node. cpu's higher PriorityTier lets CPU jobs
# start while a GPU job waits for the GPU (else that job blocks the node).
PartitionName=cpu Nodes={self.node_name} Default=YES PriorityTier=2 MaxTime=INFINITE State=UP
PartitionName=gpu Nodes={self.node_name} Default=NO MaxTime=INFINITE State=UP
"""
        self.conf_path.write_text(conf)
        self.gres_conf_path.write_text(
            "# Fake GPU: a character device with NVIDIA's major number.\n"
            "AutoDetect=off\n"
            f"NodeName={self.node_name} Name=gpu File={self.gpu_device}\n"
        )

    def _write_client_wrappers(self) -> None:
        """Put ``bin/<client>`` wrappers that pin ``SLURM_CONF`` to this cluster.

        Some callers drop ``SLURM_*`` variables before running SLURM clients:
        snakemake-executor-plugin-slurm-jobstep (inside every job) strips all
        but a few job-identity variables, ``SLURM_CONF`` included, before its
        ``srun``.  With this directory first on ``PATH`` (see :attr:`env`)
        such clients still reach this cluster.
        """
        for name in _CLIENTS:
            real = _which(name)
            if real is None:
                continue
            wrapper = self.workdir / "bin" / name
            wrapper.write_text(
                "#!/bin/sh\n"
                "# Generated by tests/slurm_cluster.py: always talk to the test cluster.\n"
                f"SLURM_CONF='{self.conf_path}'\n"
                "export SLURM_CONF\n"
                f"exec '{real}' \"$@\"\n"
            )
            wrapper.chmod(0o755)

    def _make_env(self) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items()
            # Do not leak an enclosing job's identity into our clients.
            if not (k.startswith("SLURM_") or k.startswith("SBATCH_")
                    or k.startswith("SALLOC_") or k.startswith("SQUEUE_"))
        }
        # Slurm's clients take the munge socket from AuthInfo in slurm.conf;
        # nothing else is needed.  MUNGE_SOCKET is informational (the munge/
        # unmunge CLIs take --socket).
        env["SLURM_CONF"] = str(self.conf_path)
        env["MUNGE_SOCKET"] = str(self.munge_socket)
        self._write_client_wrappers()
        env["PATH"] = os.pathsep.join([str(self.workdir / "bin"), env.get("PATH", os.defpath)])
        return env

    def _wait_for_idle_node(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        last = ""
        while True:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise SlurmClusterError(
                        f"{name} exited early with code {proc.returncode}"
                    )
            out = subprocess.run(
                [_which("sinfo"), "-h", "-N", "-o", "%N %T %G"],
                env=self.env, capture_output=True, text=True, timeout=10, check=False,
            )
            last = (out.stdout + out.stderr).strip()
            states = [ln.split()[1] for ln in out.stdout.splitlines() if len(ln.split()) >= 2]
            if out.returncode == 0 and states and all(s == "idle" for s in states):
                return
            if any(s.startswith(("drain", "down", "inval", "fail")) for s in states):
                node = subprocess.run(
                    [_which("scontrol"), "show", "node", self.node_name],
                    env=self.env, capture_output=True, text=True, timeout=10, check=False,
                )
                # Give slurmd a moment to register before declaring failure.
                if time.monotonic() > deadline - self.start_timeout / 2:
                    raise SlurmClusterError(
                        f"node is not usable: {last}\n{node.stdout}"
                    )
            if time.monotonic() > deadline:
                raise SlurmClusterError(
                    f"node not idle after {self.start_timeout:.0f} s (sinfo: {last!r})"
                )
            time.sleep(0.2)

    def _wait_for_scheduler(self, timeout: float = 6.0) -> None:
        """Wait (bounded) for slurmctld's first main-scheduler pass.

        slurmctld schedules batch jobs on a 1 s background tick, but its
        first pass comes ~3 s after startup.  A job submitted before that
        finishes just after ``sbatch --wait``'s first poll (2 s), which then
        sleeps another 8 s.  The pass logs its ``SchedulerParameters=``
        line; if the line never shows up (other SLURM version), go on.
        """
        log = self.workdir / "log" / "slurmctld.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if "SchedulerParameters=" in log.read_text(errors="replace"):
                    return
            except OSError:
                pass
            time.sleep(0.1)

    def _cancel_jobs(self, timeout: float = 15.0) -> None:
        """Cancel unfinished jobs and wait (bounded) until slurmd has ended them.

        Otherwise a job's processes could outlive slurmd (its slurmstepd is
        a separate process) when the daemons are stopped.
        """
        try:
            subprocess.run(
                [_which("scancel"), "--quiet", "--user", str(os.getuid())],
                env=self.env, capture_output=True, timeout=10, check=False,
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                out = subprocess.run(
                    [_which("squeue"), "-h", "-t", "RUNNING,COMPLETING,SUSPENDED,PENDING,CONFIGURING",
                     "-o", "%i"],
                    env=self.env, capture_output=True, text=True, timeout=10, check=False,
                )
                if out.returncode != 0 or not out.stdout.strip():
                    return
                time.sleep(0.2)
        except (OSError, subprocess.SubprocessError, TypeError):
            pass  # best effort; the daemons are stopped next anyway

    def _terminate(self, name: str, proc: subprocess.Popen) -> None:
        if proc.poll() is not None:
            return
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            try:
                proc.kill()
            except ProcessLookupError:
                return
            proc.wait(timeout=10)
