"""The first thing a spawned shard worker does: die with its parent.

Kept free of TensorFlow (of the project it imports only
`bert_tf1.data.io.lean_import`, which imports nothing): a spawned worker
unpickles its pool initializer before running it, so an initializer in a
module that imports TensorFlow would set PR_SET_PDEATHSIG only after that
import (seconds, more on a busy machine), and a parent killed meanwhile would
leave the worker running until the import ends.
"""
import importlib
import os
import sys

from absl import logging

from bert_tf1.data.io.lean_import import without_unused_keras_imports


def die_with_parent(parent_pid):
    """prctl(PR_SET_PDEATHSIG, SIGKILL): a killed parent takes this process
    along (Linux only; elsewhere nothing). Exits at once (code 1) when the
    parent `parent_pid` (int) is already gone."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal
    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) != 0:
        logging.warning("prctl(PR_SET_PDEATHSIG) failed (errno %d): workers "
                        "may outlive a killed parent", ctypes.get_errno())
    # The parent may have died before prctl took effect.
    if os.getppid() != parent_pid:
        os._exit(1)


def start_worker(parent_pid, initializer, *args):
    """Pool initializer: `die_with_parent(parent_pid)`, then the function
    named by `initializer` ("package.module:function", imported only now)
    called with `args`; the module imported as the scripts import
    TensorFlow (`without_unused_keras_imports`)."""
    die_with_parent(parent_pid)
    module, function = initializer.split(":")
    with without_unused_keras_imports():
        module = importlib.import_module(module)
    getattr(module, function)(*args)
