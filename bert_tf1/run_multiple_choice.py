r"""BERT fine-tuning for multiple choice: SWAG, HellaSwag or your own TSV.

The BERT paper's SWAG task (§4.4), with its recipe and defaults, flags and
files in the style of run_classifier.py (docs/multiple_choice.md):

    python run_multiple_choice.py --data_format=swag \
      --do_train=true --train_file=$SWAG_DIR/train.csv \
      --do_eval=true --eval_file=$SWAG_DIR/val.csv \
      --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --output_dir=/tmp/swag_output/

Writes `*.tf_record`, TF1 checkpoints `model.ckpt-N`, `eval_results.txt` and
`test_results.tsv` (per-choice probabilities of each --predict_file example).
Rerunning a command resumes from the newest checkpoint in `output_dir`.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.data.multiple_choice.readers import DATA_FORMATS  # noqa: E402
from bert_tf1.modeling import BertMultipleChoice  # noqa: E402
from bert_tf1.tasks import cli, script_flags  # noqa: E402
from bert_tf1.tasks.multiple_choice import (  # noqa: E402
    MultipleChoiceConfig, MultipleChoiceTask)

script_flags.define_model_flags()
script_flags.define_output_dir_flag()
flags.DEFINE_string(
    "train_file", None,
    "Multiple-choice file for training (e.g. SWAG train.csv), read as "
    "--data_format.")
flags.DEFINE_string(
    "eval_file", None,
    "Labelled multiple-choice file for --do_eval (e.g. SWAG val.csv).")
flags.DEFINE_string(
    "predict_file", None,
    "Multiple-choice file for --do_predict (labels optional, e.g. SWAG "
    "test.csv); its probabilities go to test_results.tsv.")
flags.DEFINE_enum(
    "data_format", "swag", list(DATA_FORMATS),
    "Layout of the data files: swag (CSV with sent1, sent2, ending0.., "
    "label), hellaswag (JSON Lines with ctx_a, ctx_b, endings, label) or "
    "tsv (header: id, context, ending0 .. ending{N-1}, label).")
flags.DEFINE_integer(
    "num_choices", 4,
    "Number of endings of every example; a row with another number is an "
    "error.")
script_flags.define_mode_flags(("train", "eval", "predict"),
                               batch_sizes={"train": 16})
script_flags.define_learning_rate_flags(learning_rate=2e-5)
script_flags.define_lora_flags()
script_flags.define_export_flags()
script_flags.define_padding_flags()
script_flags.define_evaluation_flags()
script_flags.define_runtime_and_error_flags()

flags.mark_flags_as_required(["vocab_file", "bert_config_file", "output_dir"])


def create_model(bert_config):
    """The model this script fine-tunes: edit it (or pass your own to
    `main` / `command`) to change the model. The default is
    `bert_tf1.modeling.BertMultipleChoice`.

    Args:
        bert_config: `bert_tf1.modeling.BertConfig` of --bert_config_file.
    Returns:
        keras.Model holding one `bert_tf1.modeling.BertModel`, built when
        created; give each layer you add name= (the whole contract:
        docs/custom_models.md):
    - inputs: a dict of int32 [batch_size, num_choices, seq_length] `input_ids`,
      `input_mask`, `segment_ids`;
    - outputs: float logits [batch_size, num_choices];
    - the loss is the script's (mean cross-entropy over the choices) unless the model
      overrides `compute_loss`.
    """
    return BertMultipleChoice(bert_config)


main = cli.task_main(MultipleChoiceTask, MultipleChoiceConfig, create_model)


def command(create_model=None):
    """`python run_multiple_choice.py`, `python -m
    bert_tf1.run_multiple_choice` and `bert-run-multiple-choice`: parses the
    command line and runs `main` under the one error path; `create_model`
    replaces the script's."""
    cli.main(lambda: main(create_model), script=__name__)


if __name__ == "__main__":
    command()
