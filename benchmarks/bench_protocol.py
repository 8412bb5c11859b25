"""The line protocol between `benchmarks/compare.py` and its worker processes.

Every measured variant (a framework, a precision, a row shape) lives in its own
process, started as `python <worker>.py '<json settings>'`, so no two
frameworks share threads, allocators or OpenMP pools. The worker builds its
callable and prints `ready`; then for every line `run` on stdin it runs the
callable once and prints `done <wall seconds> <cpu seconds>`, measured inside
the worker around the call and its synchronisation (no pipe latency): wall
clock (`time.perf_counter`) and the process's CPU time (`time.process_time`,
all its threads; with one thread per framework it does not count time spent
descheduled, so it stays meaningful on a loaded machine). End of input ends it. Anything it cannot build is one line
`skip <reason>` instead of `ready` (a missing optional package, say). A
variant that compiles on its first call (`torch.compile`) makes that call
while it builds and prints `ready compile <wall seconds>`: the compile is
kept out of the measured steps and reported apart.

No framework is imported here: workers import this module, not the reverse.
"""
import json
import os
import sys
import time


def pin_threads(settings):
    """Pins this process to the cores in `settings["cpus"]` (a list of ints).

    Done before any framework starts its thread pools, so every framework of a
    run works on the same cores (`compare.py --threads`).
    """
    cpus = settings.get("cpus")
    if cpus:
        os.sched_setaffinity(0, cpus)


def serve(build):
    """Runs the worker side: `build(settings)` -> a zero-argument callable.

    Args:
        build: called with the JSON settings of argv[1]; returns a callable
            that runs one step and returns only when its results are computed,
            or raises `Unavailable` to be reported as `skip`. A callable
            with a `compile_seconds` attribute (`compile_first`) was already
            called once to compile; that time goes on the `ready` line.
    """
    settings = json.loads(sys.argv[1])
    try:
        run = build(settings)
    except Unavailable as reason:
        print(f"skip {reason}", flush=True)
        return
    compile_seconds = getattr(run, "compile_seconds", None)
    print("ready" if compile_seconds is None
          else f"ready compile {compile_seconds:.3f}", flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            continue
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall = time.perf_counter() - start
        print(f"done {wall:.6f} {time.process_time() - start_cpu:.6f}",
              flush=True)


def compile_first(run):
    """Calls `run` once (the call that compiles it) and returns it with
    that call's wall seconds as `run.compile_seconds`, for `serve`."""
    start = time.perf_counter()
    run()
    run.compile_seconds = time.perf_counter() - start
    return run


class Unavailable(Exception):
    """This variant cannot run here (e.g. an optional package is missing)."""
