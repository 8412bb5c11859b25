"""A resumed run's TensorBoard curve, as TensorBoard's default loader (the
Rust data server) reads it: each step once, the resumed run's values."""
import os
import subprocess
import tempfile
import time

import pytest
import tensorflow as tf

from bert_tf1.modeling.training.summaries import TrainingSummaries


def _default_loader_scalars(logdir, tag):
    """(step, value) of `tag` as `tensorboard --logdir` (--load_fast=auto)
    serves them: the data server, asked over gRPC as TensorBoard asks it."""
    grpc = pytest.importorskip(
        "grpc", reason="TensorBoard's data server needs grpcio (installed with tensorflow)")
    from tensorboard import context
    from tensorboard.data import grpc_provider
    from tensorboard.data.server_ingester import get_server_binary

    binary = get_server_binary()
    if binary is None:
        pytest.skip("tensorboard-data-server is not installed")
    port_file = os.path.join(tempfile.mkdtemp(), "port")
    server = subprocess.Popen(
        [binary.path, "--logdir", str(logdir), "--port", "0", "--port-file",
         port_file, "--die-after-stdin", "--reload", "once"],
        stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            assert time.monotonic() < deadline, "the data server did not start"
            time.sleep(0.05)
        address = "localhost:" + open(port_file).read().strip()
        provider = grpc_provider.GrpcDataProvider(
            address, grpc_provider.make_stub(grpc.insecure_channel(address)))
        while True:  # Until its one load is done.
            data = provider.read_scalars(
                context.RequestContext(), experiment_id="",
                plugin_name="scalars", downsample=1000)
            if data or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    return [(point.step, point.value) for point in data["."][tag]]


def _run(logdir, start_step, steps, offset):
    summaries = TrainingSummaries(str(logdir), start_step)
    for step in steps:
        summaries.write_step(step, {"loss": offset + step})
    summaries.close()
    time.sleep(1.1)  # the next run's event file gets a later name


def _killed_then_resumed(logdir):
    # Killed after logging steps 1..10, resumed from the checkpoint of step
    # 5; the resumed run logs step 8 first (as with --log_steps=4 from 5).
    _run(logdir, 0, range(1, 11), 0.0)
    _run(logdir, 5, [8, 12], 100.0)


def test_the_default_loader_shows_the_resumed_run_only(tmp_path):
    _killed_then_resumed(tmp_path)
    assert _default_loader_scalars(tmp_path, "loss") == [
        (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0), (8, 108.0),
        (12, 112.0)]


def test_the_default_loader_ignores_session_start(tmp_path):
    # Why the rewrite: the Estimator's SessionLog(START) at the resumed step
    # does not drop the killed run's steps 6 and 7 in the default loader.
    from tensorflow.python.ops import summary_ops_v2

    for first_step, steps, offset in ((0, range(1, 11), 0.0), (5, [8], 100.0)):
        start = tf.compat.v1.Event(step=first_step, session_log=tf.compat.v1.SessionLog(
            status=tf.compat.v1.SessionLog.START)).SerializeToString()
        writer = tf.summary.create_file_writer(str(tmp_path))
        with writer.as_default():
            summary_ops_v2.import_event(tf.constant(start))
            for step in steps:
                tf.summary.scalar("loss", offset + step, step=step)
        writer.close()
        time.sleep(1.1)
    steps = [step for step, _ in _default_loader_scalars(tmp_path, "loss")]
    assert steps == [1, 2, 3, 4, 5, 6, 7, 8]
