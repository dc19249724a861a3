#!/usr/bin/env python3
# Runs a command and writes the CPU seconds of its whole process tree to a file: `user sys wall` (seconds).
# Used by scripts/run-tests.mjs when FLAGWIRE_TEST_TIMES=1.
#   python3 scripts/cpu-times.py OUT_FILE COMMAND [ARG...]
#
# Why Python: this process makes itself a child subreaper (prctl, which Node cannot call), so a daemon the
# command starts and leaves (PostgreSQL started by pg_ctl, whose parent ends at once) is given to this
# process when its parent ends, and its CPU is counted when this process reaps it. /usr/bin/time counts
# only the descendants their own parents waited for: a test file's PostgreSQL would not be counted.
import ctypes
import os
import resource
import signal
import sys
import time

kPrSetChildSubreaper = 36
# After the command ends, how long its orphans (a cluster it is still stopping) are waited for.
kOrphanWaitS = 30

out, command = sys.argv[1], sys.argv[2:]
ctypes.CDLL(None, use_errno=True).prctl(kPrSetChildSubreaper, 1, 0, 0, 0)
started = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp(command[0], command)
# The runner's SIGTERM (a file past its bound) is the command's.
signal.signal(signal.SIGTERM, lambda signum, frame: os.kill(pid, signal.SIGTERM))

status = 0
while True:
    reaped, st = os.waitpid(-1, 0)
    if reaped == pid:
        status = st
        break
wall = time.monotonic() - started
deadline = time.monotonic() + kOrphanWaitS
orphans = 0
while time.monotonic() < deadline:
    try:
        reaped, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if reaped == 0:
        time.sleep(0.05)
    else:
        orphans += 1
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, 'w') as f:
    f.write(f'{usage.ru_utime:.2f} {usage.ru_stime:.2f} {wall:.2f}\n')
if os.WIFSIGNALED(status):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status))
