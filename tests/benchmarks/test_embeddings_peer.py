"""benchmarks/embeddings_peer.py's `--optimizer=original` schedule equals
ours: the peer then differs from our side in framework, not in recipe
(the update rule itself needs torch, absent here; the schedule does not)."""
import importlib.util

import numpy as np

from tests.conftest import REPO_ROOT


def _peer_module():
    spec = importlib.util.spec_from_file_location(
        "embeddings_peer", REPO_ROOT / "benchmarks" / "embeddings_peer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # torch is imported inside functions
    return module


def test_original_rate_is_our_schedule_at_each_update():
    from bert_tf1.modeling.optimization.lr_schedule import WarmupLinearDecay

    peer = _peer_module()
    steps, warmup, learning_rate = 100, 10, 2e-5
    ours = WarmupLinearDecay(learning_rate, steps, warmup)
    # Update t (from 0) of ours uses the rate at iterations + 1 (the
    # original's step after the increment, `schedule_step_offset=1`).
    expected = np.array([float(ours(t + 1)) for t in range(steps)])
    peers = np.array([learning_rate * peer.original_rate(t, warmup, steps)
                      for t in range(steps)])
    np.testing.assert_allclose(peers, expected, rtol=1e-6, atol=1e-12)
    assert peers[0] == learning_rate / warmup and peers[-1] == 0.0
