"""One-core set-up shared by the benchmarks: import this before numpy.

Importing it sets the thread-count variables of OpenMP, OpenBLAS, MKL and numba to 1;
`pin_one_core()` then restricts the process to one CPU so that nothing runs in parallel.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"


def pin_one_core() -> int | None:
    """Pin this process to one CPU (Linux); returns it, or None where unsupported."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu
