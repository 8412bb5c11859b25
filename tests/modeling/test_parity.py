"""Our models, loaded from the original's checkpoints, reproduce its outputs."""
import numpy as np
import pytest

from bert_tf1.modeling import checkpoints
from tests.helpers.fixture_models import (FIXTURE_MODELS, INPUT_KEYS, build_model,
                                  compute_outputs, reference_outputs)

TOLERANCE = 1e-5
LABEL_KEYS = {"masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
              "next_sentence_labels", "label_ids", "start_positions",
              "end_positions"}


@pytest.mark.parametrize("fixture", sorted(FIXTURE_MODELS))
def test_outputs_match_original(fixtures_dir, fixture):
    fixture_dir = fixtures_dir / fixture
    model = build_model(fixture_dir)
    status = checkpoints.load_tf1_checkpoint(model, fixture_dir, verbose=False)
    assert status.missing == [] and status.unused == []
    reference = reference_outputs(fixture_dir)
    ours = compute_outputs(model, reference)
    expected_keys = set(reference) - set(INPUT_KEYS) - LABEL_KEYS
    # Every reference output is compared, including every encoder layer.
    assert expected_keys == set(ours)
    for key in sorted(expected_keys):
        assert ours[key].shape == reference[key].shape, key
        diff = float(np.max(np.abs(ours[key] - reference[key])))
        assert diff <= TOLERANCE, f"{fixture}/{key}: max abs diff {diff}"


def test_random_init_does_not_match(fixtures_dir):
    # Guards the parity test itself: an unloaded model is far from the fixture.
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    reference = reference_outputs(fixture_dir)
    ours = compute_outputs(build_model(fixture_dir), reference)
    assert np.max(np.abs(ours["sequence_output"] - reference["sequence_output"])) > 1e-2
