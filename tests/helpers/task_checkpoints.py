"""Checkpoints of the tagging and multiple-choice models for tests.

No fixture holds a fine-tuned tagger or multiple-choice model, so these take a
fixture's encoder (the original's weights) and add a head drawn from a seeded
generator, large enough that the predictions vary from word to word and
from choice to choice. Written in the TF1 layout, as run_ner.py /
run_multiple_choice.py write them (a tagger with its `label_list.txt`).
"""
import numpy as np

from bert_tf1.modeling import BertConfig, checkpoints
from bert_tf1.modeling.models import BertMultipleChoice, BertTokenClassifier

#: An IOB2 label list in the order `bert_tf1.data.tagging.schemes.scheme_labels` makes.
TAGS = ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]


def _set_head(model, scale, seed):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        name = variable.path.split("/", 1)[1]
        if name.startswith("cls/"):
            variable.assign(rng.normal(scale=scale, size=variable.shape)
                            .astype(np.float32))


def write_tagger_checkpoint(fixture_dir, output_dir, labels=TAGS, seed=0,
                            scale=1.0):
    """A BertTokenClassifier on the fixture's encoder, saved as
    `output_dir/bert_model.ckpt` with `label_list.txt`; returns the model."""
    config = BertConfig.from_json_file(fixture_dir / "bert_config.json")
    model = BertTokenClassifier(config, len(labels))
    checkpoints.load_tf1_checkpoint(model, fixture_dir, verbose=False)
    _set_head(model, scale, seed)
    output_dir.mkdir(parents=True, exist_ok=True)
    checkpoints.save_tf1_checkpoint(model, output_dir / "bert_model.ckpt")
    (output_dir / "label_list.txt").write_text(
        "".join(label + "\n" for label in labels), encoding="utf-8")
    return model


def write_multiple_choice_checkpoint(fixture_dir, output_dir, seed=0,
                                     scale=1.0):
    """A BertMultipleChoice on the fixture's encoder, saved as
    `output_dir/bert_model.ckpt`; returns the model."""
    config = BertConfig.from_json_file(fixture_dir / "bert_config.json")
    model = BertMultipleChoice(config)
    checkpoints.load_tf1_checkpoint(model, fixture_dir, verbose=False)
    _set_head(model, scale, seed)
    output_dir.mkdir(parents=True, exist_ok=True)
    checkpoints.save_tf1_checkpoint(model, output_dir / "bert_model.ckpt")
    return model
