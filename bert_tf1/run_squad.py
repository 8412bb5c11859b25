r"""BERT fine-tuning and prediction for SQuAD 1.1 and SQuAD 2.0.

The command line of the original `run_squad.py` (same flags, defaults and
checks, same files in `output_dir`), with Keras `model.fit` underneath:

    python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --do_train=True --train_file=$SQUAD_DIR/train-v1.1.json \
      --do_predict=True --predict_file=$SQUAD_DIR/dev-v1.1.json \
      --train_batch_size=12 --learning_rate=3e-5 --num_train_epochs=2.0 \
      --max_seq_length=384 --doc_stride=128 --output_dir=/tmp/squad_base/

Writes the original's files, and `eval_results.json` (the official
evaluation) when the predict file has gold answers. Rerunning a command
resumes training from the newest checkpoint in `output_dir`.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.modeling import BertSquad  # noqa: E402
from bert_tf1.tasks import cli, script_flags  # noqa: E402
from bert_tf1.tasks.squad import SquadConfig, SquadTask  # noqa: E402

script_flags.define_model_flags(max_seq_length=384)
script_flags.define_output_dir_flag()
flags.DEFINE_string("train_file", None,
                    "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string(
    "predict_file", None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json")
flags.DEFINE_integer(
    "doc_stride", 128,
    "When splitting up a long document into chunks, how much stride to "
    "take between chunks.")
flags.DEFINE_integer(
    "max_query_length", 64,
    "The maximum number of tokens for the question. Questions longer than "
    "this will be truncated to this length.", lower_bound=1)
script_flags.define_mode_flags(
    ("train", "predict"),
    do_predict_help="Whether to run eval on the dev set.",
    predict_batch_size_help="Total batch size for predictions.")
script_flags.define_learning_rate_flags()
script_flags.define_lora_flags()
script_flags.define_export_flags()
flags.DEFINE_integer(
    "n_best_size", 20,
    "The total number of n-best predictions to generate in the "
    "nbest_predictions.json output file.")
flags.DEFINE_integer(
    "max_answer_length", 30,
    "The maximum length of an answer that can be generated. This is needed "
    "because the start and end predictions are not conditioned on one "
    "another.", lower_bound=1)
flags.DEFINE_bool(
    "verbose_logging", False,
    "If true, all of the warnings related to data processing will be "
    "printed. A number of warnings are expected for a normal SQuAD "
    "evaluation.")
flags.DEFINE_bool(
    "version_2_with_negative", False,
    "If true, the SQuAD examples contain some that do not have an answer.")
flags.DEFINE_float(
    "null_score_diff_threshold", 0.0,
    "If null_score - best_non_null is greater than the threshold predict "
    "null.")
script_flags.define_padding_flags(dynamic_padding=False,
                                 group_by_length=False)
script_flags.define_runtime_and_error_flags()

flags.mark_flags_as_required(["vocab_file", "bert_config_file", "output_dir"])


def create_model(bert_config):
    """The model this script fine-tunes: edit it (or pass your own to
    `main` / `command`) to change the model, as the original's
    `run_squad.create_model`. The default is the original's model,
    `bert_tf1.modeling.BertSquad`.

    Args:
        bert_config: `bert_tf1.modeling.BertConfig` of --bert_config_file.
    Returns:
        keras.Model holding one `bert_tf1.modeling.BertModel`, built when
        created; give each layer you add name= (the whole contract:
        docs/custom_models.md):
    - inputs: a dict of int32 [batch_size, seq_length] `input_ids`,
      `input_mask`, `segment_ids`;
    - outputs: a dict of float `start_logits` and `end_logits` [batch_size, seq_length];
    - the loss is the script's (the mean of the start and end cross-entropies) unless the model
      overrides `compute_loss`.
    """
    return BertSquad(bert_config)


main = cli.task_main(SquadTask, SquadConfig, create_model)


def command(create_model=None):
    """`python run_squad.py`, `python -m bert_tf1.run_squad` and
    `bert-run-squad`: parses the command line and runs `main` under the one
    error path; `create_model` replaces the script's."""
    cli.main(lambda: main(create_model), script=__name__)


if __name__ == "__main__":
    command()
