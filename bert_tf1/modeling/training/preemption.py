"""SIGTERM and SIGINT during training: finish the step, checkpoint, exit 143
(user view: docs/troubleshooting.md). `PreemptionGuard` turns the first
signal into a request; `TF1CheckpointSaver.on_train_end` writes the
checkpoint and `run_training` raises `TrainingInterrupted`; several workers
agree on the stop by a collective (`strategy_loop`).

Why a watcher thread: Python runs signal handlers in the main thread only,
between bytecodes, so not while it waits inside TensorFlow; a thread
reading the signal wakeup fd sees each signal at once.
"""
import functools
import os
import signal
import sys
import threading

import keras
from absl import logging

from bert_tf1.modeling import keras_internals

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class TrainingInterrupted(Exception):
    """Training stopped on a signal, after writing a checkpoint (not a
    `UserError`, not a bug: scripts print `str(self)` as one line and exit
    with `exit_status`).

    Attributes:
        signal_number: the signal that asked to stop (e.g. 15).
        exit_status: 128 + signal_number (143 for SIGTERM).
        step: the global step of the checkpoint written.
        checkpoint: its prefix, or None (a worker that writes none).
    """

    def __init__(self, signal_number, step, checkpoint, output_dir):
        self.signal_number = int(signal_number)
        self.exit_status = 128 + self.signal_number
        self.step = step
        self.checkpoint = checkpoint
        name = signal_name(self.signal_number)
        where = (f"wrote the checkpoint {checkpoint}" if checkpoint else
                 f"the chief wrote the checkpoint of step {step} in {output_dir}")
        super().__init__(
            f"stopped by {name} after step {step}: {where}; run the same "
            f"command again to resume from it (exit status {self.exit_status})")


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class PreemptionGuard:
    """Catches SIGTERM/SIGINT while training (a context manager).

    Inside the block the first signal sets `signal_number`; the second ends
    the process at once (status 128 + signal). Outside it, or when not
    entered from the main thread, signals keep their previous handling.

    Attributes:
        signal_number: int or None, the signal that asked training to stop.
        active: bool, handlers are installed.
    """

    def __init__(self, signals=STOP_SIGNALS):
        self._signals = tuple(signals)
        self.signal_number = None
        self.active = False
        self.was_installed = False
        self._previous = {}
        self._previous_wakeup = -1
        self._pipe = None
        self._thread = None

    @property
    def requested(self):
        """True once a stop was asked for (here, or by another worker)."""
        return self.signal_number is not None

    def stop(self, signal_number):
        """Records a stop agreed on elsewhere (another worker's signal)."""
        if self.signal_number is None:
            self.signal_number = int(signal_number)

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            logging.info("Training runs outside the main thread: SIGTERM "
                         "and SIGINT keep their default handling.")
            return self
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        self._pipe = (read_fd, write_fd)
        for number in self._signals:
            # The Python-level handler has nothing to do: the watcher thread
            # acts on the byte the C handler writes to the wakeup fd.
            self._previous[number] = signal.signal(number, _ignore)
        self._previous_wakeup = signal.set_wakeup_fd(
            write_fd, warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._watch,
                                        name="preemption-guard", daemon=True)
        self._thread.start()
        self.active = True
        self.was_installed = True
        return self

    def __exit__(self, *exc_info):
        if not self.active:
            return False
        self.active = False
        signal.set_wakeup_fd(self._previous_wakeup)
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        read_fd, write_fd = self._pipe
        os.write(write_fd, b"\0")  # Wakes the watcher: 0 is no signal.
        self._thread.join(timeout=5)
        os.close(read_fd)
        os.close(write_fd)
        return False

    def _watch(self):
        read_fd = self._pipe[0]
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            for number in data:
                if number == 0:
                    return
                if number in self._signals:
                    self._on_signal(number)

    def _on_signal(self, number):
        name = signal_name(number)
        if self.signal_number is None:
            self.signal_number = number
            logging.warning(
                "Received %s: finishing the current step, then writing a "
                "checkpoint and stopping (send it again to stop at once, "
                "without a checkpoint).", name)
            return
        logging.warning("Received %s again: stopping at once, without a "
                        "checkpoint.", name)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + number)


def _ignore(signum, frame):
    del signum, frame


def stop_on_signals(function):
    """Decorator: runs `function` inside a `PreemptionGuard`, passed as
    `guard=`. A signal that arrived while `function` did no step is sent
    again once the handlers are restored, so it is not lost.
    """
    @functools.wraps(function)
    def guarded(*args, **kwargs):
        with PreemptionGuard() as guard:
            result = function(*args, guard=guard, **kwargs)
        if guard.requested and guard.was_installed:
            os.kill(os.getpid(), guard.signal_number)
        return result
    return guarded


class StopOnRequest(keras.callbacks.Callback):
    """Stops `fit` at the next optimizer-step boundary (no accumulated
    gradient lost) once a stop is requested.
    """

    def __init__(self, guard, optimizer):
        super().__init__()
        self._guard = guard
        self._optimizer = optimizer

    def on_train_batch_end(self, batch, logs=None):
        steps = int(self._optimizer.gradient_accumulation_steps or 1)
        batches = keras_internals.batch_counter(self._optimizer)
        if self._guard.requested and int(batches.numpy()) % steps == 0:
            self.model.stop_training = True
