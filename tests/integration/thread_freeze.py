"""Every thread of a process held still but the ones a test names, with ptrace (PTRACE_SEIZE, then
PTRACE_INTERRUPT: each held thread sits in a ptrace stop, the others run on): to show that something
needs only those threads. A held thread takes no signal (the kernel gives a process's signal to a
thread that runs and does not block it). Skipped where this process may not trace its child."""
import ctypes
import errno
import os
from contextlib import contextmanager
from pathlib import Path

import pytest

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000  # __WALL: wait for a thread of another process (a clone child)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long


def _ptrace(request, tid):
    if _libc.ptrace(request, tid, None, None) == -1:
        code = ctypes.get_errno()
        raise OSError(code, f"ptrace({request:#x}, {tid}): {os.strerror(code)}")


def threads(pid):
    """{thread id: name} of the process now (a thread that ends while listed is left out: Dispatch's
    idle workers end after a few seconds)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found[int(task.name)] = (task / "comm").read_text().strip()
        except (FileNotFoundError, ProcessLookupError):
            pass
    return found


@contextmanager
def all_threads_held_but(pid, keep):
    """Holds every thread of `pid` for whose name `keep` is false (the threads it starts meanwhile
    run) until the block ends. Yields (the names of those kept, of those held)."""
    held, kept = [], []
    try:
        for tid, name in threads(pid).items():
            if keep(name):
                kept.append(name)
                continue
            try:
                _ptrace(PTRACE_SEIZE, tid)
            except OSError as error:
                if error.errno == errno.EPERM and not held:
                    pytest.skip(f"this process may not ptrace its child: {error}")
                if error.errno == errno.ESRCH:
                    continue  # ended since it was listed
                raise
            try:
                _ptrace(PTRACE_INTERRUPT, tid)
            except ProcessLookupError:
                os.waitpid(tid, WALL)  # ended since it was seized: its end is ours to collect
                continue
            _, status = os.waitpid(tid, WALL)  # its ptrace stop, or its end meanwhile
            if os.WIFSTOPPED(status):
                held.append((tid, name))
        yield kept, [name for _, name in held]
    finally:
        for tid, _ in held:
            try:
                _ptrace(PTRACE_DETACH, tid)
            except ProcessLookupError:
                # Killed by the process's exit meanwhile (a thread it started did the rest): a
                # traced thread's end is its tracer's to collect, or the process is never reaped.
                os.waitpid(tid, WALL)
