r"""BERT fine-tuning for sentence (pair) classification: GLUE and XNLI.

The command line of the original `run_classifier.py` (same flags, defaults and
checks, same files in `output_dir`), with Keras `model.fit` underneath:

    python run_classifier.py --task_name=MRPC --do_train=true --do_eval=true \
      --data_dir=$GLUE_DIR/MRPC --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
      --output_dir=/tmp/mrpc_output/

Writes `*.tf_record`, TF1 checkpoints `model.ckpt-N`, `eval_results.txt` and
`test_results.tsv`, and makes `output_dir` a model folder. Batches are cut to
their longest example (docs/fine_tuning_speed.md). Rerunning a command
resumes from the newest checkpoint in `output_dir`.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.data.glue.processors import PROCESSORS  # noqa: E402
from bert_tf1.modeling import BertClassifier  # noqa: E402
from bert_tf1.tasks import cli, script_flags  # noqa: E402
from bert_tf1.tasks.classification import (  # noqa: E402
    ClassificationConfig, ClassificationTask)

# --help prints this docstring: name the tasks --task_name knows.
__doc__ += "\nKnown --task_name values: %s.\n" % ", ".join(sorted(PROCESSORS))

flags.DEFINE_string(
    "data_dir", None,
    "The input data dir. Should contain the .tsv files (or other data files) "
    "for the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
script_flags.define_output_dir_flag()
script_flags.define_model_flags()
script_flags.define_mode_flags(("train", "eval", "predict"))
script_flags.define_learning_rate_flags()
script_flags.define_lora_flags()
script_flags.define_export_flags()
script_flags.define_padding_flags()
script_flags.define_evaluation_flags()
script_flags.define_runtime_and_error_flags()

flags.mark_flags_as_required(["data_dir", "task_name", "vocab_file",
                             "bert_config_file", "output_dir"])


def create_model(bert_config, num_labels):
    """The model this script fine-tunes: edit it (or pass your own to
    `main` / `command`) to change the model, as the original's
    `run_classifier.create_model`. The default is the original's model,
    `bert_tf1.modeling.BertClassifier`.

    Args:
        bert_config: `bert_tf1.modeling.BertConfig` of --bert_config_file.
        num_labels: number of classes (1: a regression task, STS-B).
    Returns:
        keras.Model holding one `bert_tf1.modeling.BertModel`, built when
        created; give each layer you add name= (the whole contract:
        docs/custom_models.md):
    - inputs: a dict of int32 [batch_size, seq_length] `input_ids`,
      `input_mask`, `segment_ids`;
    - outputs: float logits [batch_size, num_labels];
    - the loss is the script's (mean cross-entropy; mean squared error for num_labels == 1) unless the model
      overrides `compute_loss`.
    """
    return BertClassifier(bert_config, num_labels)


main = cli.task_main(ClassificationTask, ClassificationConfig, create_model)


def command(create_model=None):
    """`python run_classifier.py`, `python -m bert_tf1.run_classifier` and
    `bert-run-classifier`: parses the command line and runs `main` under the
    one error path; `create_model` replaces the script's."""
    cli.main(lambda: main(create_model), script=__name__)


if __name__ == "__main__":
    command()
