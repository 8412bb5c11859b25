"""Connecting to a Cloud TPU with a bounded wait and a one-line error.

TensorFlow's own path ends in a `URLError` traceback for a TPU name it cannot
resolve, and waits forever in `initialize_tpu_system` when nothing listens at
a `grpc://` address. Here the address is checked first (TCP connect, retried
until `timeout_s`) and the initialisation runs in a daemon thread.
"""
import socket
import threading
import time
import urllib.parse

import tensorflow as tf
from absl import logging
from bert_tf1.data.io.errors import UserError


class TPUConnectionError(UserError, ConnectionError):
    """No TPU answered at the address given (a `ConnectionError`, reported
    by the scripts as a one-line user error).
    """


def _grpc_host_port(address):
    """(host, port) of a `grpc://host:port` address, else None."""
    if not address or not address.startswith("grpc://"):
        return None
    parsed = urllib.parse.urlparse(address)
    if not parsed.hostname or not parsed.port:
        raise TPUConnectionError(
            f"--tpu_name {address!r} is not a grpc://host:port address.")
    return parsed.hostname, parsed.port


def wait_for_port(host, port, timeout_s, address):
    """Retries a TCP connect to host:port until it succeeds or time runs out.

    Raises:
        TPUConnectionError: nothing accepted a connection within `timeout_s`.
    """
    deadline = time.monotonic() + timeout_s
    last_error = None
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host, port),
                                          timeout=max(0.1, min(5.0, left))):
                return
        except OSError as error:
            last_error = error
        if time.monotonic() >= deadline:
            raise TPUConnectionError(
                f"No TPU answered at {address} within {timeout_s:g} s "
                f"({last_error.strerror or last_error}). Check --tpu_name and "
                "that the TPU is up, or raise --tpu_timeout_s.")
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def _run_with_timeout(function, timeout_s, what):
    """Runs `function()` in a daemon thread; raises if it takes too long."""
    outcome = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # re-raised in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="tpu-connect", daemon=True)
    thread.start()
    thread.join(max(0.0, timeout_s))
    if thread.is_alive():
        raise TPUConnectionError(
            f"{what} did not finish within {timeout_s:g} s; no TPU answered. "
            "Check --tpu_name and that the TPU is up, or raise --tpu_timeout_s.")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def connect_tpu(tpu_name, zone=None, project=None, timeout_s=120.0):
    """Resolves, connects to and initialises a Cloud TPU (a name or
    `grpc://host:port`) within `timeout_s`; returns the connected
    `TPUClusterResolver`.

    Raises:
        TPUConnectionError: the name cannot be resolved, or nothing answers
            within `timeout_s`.
    """
    start = time.monotonic()
    host_port = _grpc_host_port(tpu_name)
    if host_port:
        wait_for_port(*host_port, timeout_s, tpu_name)
    try:
        resolver = _run_with_timeout(
            lambda: tf.distribute.cluster_resolver.TPUClusterResolver(
                tpu=tpu_name, zone=zone, project=project),
            timeout_s - (time.monotonic() - start),
            f"Resolving the TPU {tpu_name!r}")
    except TPUConnectionError:  # the timeout: its message says it all
        raise
    except (OSError, ValueError) as error:  # URLError is an OSError
        reason = getattr(error, "reason", None) or error
        raise TPUConnectionError(
            f"Could not find the TPU {tpu_name!r}: {reason}. --tpu_name needs "
            "a Cloud TPU name (run on a GCE VM that can see it) or a "
            "grpc://host:port address.") from None

    def initialise():
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)

    _run_with_timeout(initialise, timeout_s - (time.monotonic() - start),
                      f"Initialising the TPU at {tpu_name}")
    logging.info("Connected to the TPU %s in %.1f s.", tpu_name,
                 time.monotonic() - start)
    return resolver
