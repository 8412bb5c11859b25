r"""Exports a trained BERT as a SavedModel that serves raw text.

Give it the same vocab, case rule, config and max_seq_length as training:

    python export_saved_model.py --model_type=classifier --task_name=MRPC \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --do_lower_case=true \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=/tmp/mrpc_output --max_seq_length=128 \
      --export_dir=/tmp/mrpc_export

`--init_checkpoint` is an output_dir of run_classifier.py / run_squad.py (its
newest `model.ckpt-N`), a checkpoint prefix, or a released model's directory
(`bert_model.ckpt`, for `--model_type=encoder`). Signatures (list them with
`saved_model_cli show --all --dir <export_dir>`):

- classifier: `classify_text(text)` (= serving_default),
  `classify_pair(text_a, text_b)`, `classify_ids(input_ids, input_mask,
  segment_ids)` -> probabilities, logits, label_id, label (regression tasks
  such as STS-B: score);
- squad: `squad(question, context)` (= serving_default) -> start_logits,
  end_logits; `squad_answer(question, context)` -> answer_text, score,
  start_position, end_position; `squad_ids(...)`;
- encoder: `encode_text(text)` (= serving_default), `encode_pair`,
  `encode_ids` -> pooled_output, sequence_output.

The export is written to a temporary directory and renamed; an existing
`--export_dir` is never overwritten. Load it with `import tensorflow_text`
first (the in-graph tokenizer uses its ops).
"""

from tasks.quiet_start import start_tensorflow  # noqa: E402

# Before anything else imports TensorFlow: its start-up lines would bury
# the one-line errors (see tasks/quiet_start.py).
start_tensorflow()

from absl import flags  # noqa: E402

from tasks import cli, script_flags  # noqa: E402
from tasks.errors import UserError  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_enum("model_type", "classifier", ["classifier", "squad", "encoder"],
                  "What the checkpoint holds: a run_classifier.py classifier, "
                  "a run_squad.py span predictor, or just the encoder.")
script_flags.define_model_flags(
    init_checkpoint_help="The checkpoint to export: a prefix (model.ckpt-N, "
    "bert_model.ckpt) or a directory (an output_dir: its newest checkpoint).")
flags.DEFINE_string("export_dir", None,
                    "The SavedModel directory to create (must not exist).")
flags.DEFINE_string("task_name", None,
                    "Classifier: the run_classifier.py task (its label list).")
flags.DEFINE_list("label_list", None,
                  "Classifier: labels in label-id order, comma-separated "
                  "(instead of --task_name).")
flags.DEFINE_integer("num_labels", None,
                     "Classifier: number of labels, named 0..n-1 (instead of "
                     "--task_name); 1 means regression.")
flags.DEFINE_integer(
    "max_query_length", 64,
    "SQuAD: the maximum number of tokens for the question. Questions longer "
    "than this will be truncated to this length.")
flags.DEFINE_integer(
    "max_answer_length", 30,
    "SQuAD: the maximum length of an answer that can be generated.")
flags.DEFINE_integer(
    "n_best_size", 20,
    "SQuAD: the number of top start and end logits considered for the answer.")
cli.define_common_flags(checkpoint_flags=False)

for _name in ("bert_config_file", "vocab_file", "init_checkpoint", "export_dir"):
    flags.mark_flag_as_required(_name)


def classifier_labels():
    """(label_list, num_labels) from --task_name, --label_list or --num_labels.

    Raises:
        UserError: none or more than one of them is given.
    """
    given = [name for name in ("task_name", "label_list", "num_labels")
             if FLAGS[name].value is not None]
    if len(given) != 1:
        raise UserError(
            "--model_type=classifier needs exactly one of --task_name, "
            f"--label_list, --num_labels; got {given or 'none'}.")
    if FLAGS.task_name is not None:
        from data.glue.processors import get_processor
        processor = get_processor(FLAGS.task_name)
        if processor.is_regression:
            return None, 1
        return processor.get_labels(), None
    if FLAGS.label_list is not None:
        return FLAGS.label_list, None
    if FLAGS.num_labels < 1:
        raise UserError(f"--num_labels must be >= 1, got {FLAGS.num_labels}.")
    return None, FLAGS.num_labels


def run():
    from data.tokenization import full_tokenizer
    from serving import export_saved_model

    full_tokenizer.validate_case_matches_checkpoint(FLAGS.do_lower_case,
                                                    FLAGS.init_checkpoint)
    label_list, num_labels = None, None
    if FLAGS.model_type == "classifier":
        label_list, num_labels = classifier_labels()
    export_saved_model(
        FLAGS.export_dir, model_type=FLAGS.model_type,
        bert_config_file=FLAGS.bert_config_file, vocab_file=FLAGS.vocab_file,
        init_checkpoint=FLAGS.init_checkpoint,
        do_lower_case=FLAGS.do_lower_case, max_seq_length=FLAGS.max_seq_length,
        label_list=label_list, num_labels=num_labels,
        max_query_length=FLAGS.max_query_length,
        max_answer_length=FLAGS.max_answer_length,
        n_best_size=FLAGS.n_best_size)
    print(f"Wrote {FLAGS.export_dir}")


if __name__ == "__main__":
    cli.main(run)
