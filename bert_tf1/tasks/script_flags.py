"""The flags several scripts share, defined once with the original's names,
defaults and help (run_classifier.py, run_squad.py, run_pretraining.py,
extract_features.py). This module disclaims its flags, so `--help` lists
them under the calling script; scripts mark required flags themselves.
"""
from absl import flags

from bert_tf1.tasks import cli
from bert_tf1.tasks.modes import MODES

# From here on, flags defined in this module belong to the calling script.
flags.disclaim_key_flags()

INIT_CHECKPOINT_HELP = (
    "Initial checkpoint (usually from a pre-trained BERT model): a TF1 "
    "prefix or folder, a Hugging Face folder or a keras-hub preset folder.")
MAX_SEQ_LENGTH_HELP = (
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded.")
VOCAB_FILE_HELP = "The vocabulary file that the BERT model was trained on."
DO_LOWER_CASE_HELP = (
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
#: Appended to every --do_lower_case help (`bert_tf1.tasks.cli.lower_case_from_flags`).
LOWER_CASE_RECORD_HELP = (
    " When not given: the do_lower_case recorded in tokenizer_config.json "
    "beside --vocab_file, if there is one (a given value that contradicts it "
    "is an error).")

def define_vocab_flags(vocab_help=None, do_lower_case=True,
                       do_lower_case_help=None, flag_values=flags.FLAGS):
    """Defines --vocab_file and --do_lower_case (default `do_lower_case`;
    run_ner.py: False); helps default to the original's, plus
    `LOWER_CASE_RECORD_HELP`. `flag_values`: where (tests pass their own)."""
    flags.DEFINE_string("vocab_file", None, vocab_help or VOCAB_FILE_HELP,
                        flag_values=flag_values)
    help_text = do_lower_case_help or DO_LOWER_CASE_HELP
    if not do_lower_case_help:
        help_text += LOWER_CASE_RECORD_HELP
    flags.DEFINE_bool("do_lower_case", do_lower_case, help_text,
                      flag_values=flag_values)


def define_model_flags(max_seq_length=128, max_seq_length_help=None,
                       vocab_file=True, do_lower_case=True,
                       init_checkpoint_help=INIT_CHECKPOINT_HELP,
                       flag_values=flags.FLAGS):
    """Defines bert_config_file, init_checkpoint, max_seq_length (default
    `max_seq_length`; run_squad.py: 384) and, with `vocab_file`,
    `define_vocab_flags(do_lower_case=do_lower_case)`."""
    flags.DEFINE_string(
        "bert_config_file", None,
        "The config json file corresponding to the pre-trained BERT model. "
        "This specifies the model architecture.", flag_values=flag_values)
    if vocab_file:
        define_vocab_flags(do_lower_case=do_lower_case,
                           flag_values=flag_values)
    flags.DEFINE_string("init_checkpoint", None, init_checkpoint_help,
                        flag_values=flag_values)
    flags.DEFINE_integer("max_seq_length", max_seq_length,
                         max_seq_length_help or MAX_SEQ_LENGTH_HELP,
                         flag_values=flag_values)


def define_output_dir_flag(flag_values=flags.FLAGS):
    """Defines --output_dir (checkpoints and result files)."""
    flags.DEFINE_string(
        "output_dir", None,
        "The output directory where the model checkpoints will be written.",
        flag_values=flag_values)


def define_mode_flags(modes, do_predict_help=None,
                      predict_batch_size_help=None, batch_sizes=None,
                      flag_values=flags.FLAGS):
    """Defines do_<mode> and <mode>_batch_size for each of `modes`
    (`bert_tf1.tasks.modes.MODES`); run_squad.py passes its predict helps, and
    `batch_sizes` (mode -> default) overrides run_classifier.py's defaults."""
    batch_sizes = batch_sizes or {}
    for name in modes:
        mode = MODES[name]
        do_help, batch_size_help = mode.do_help, mode.batch_size_help
        if name == "predict":
            do_help = do_predict_help or do_help
            batch_size_help = predict_batch_size_help or batch_size_help
        flags.DEFINE_bool(mode.flag, False, do_help, flag_values=flag_values)
        flags.DEFINE_integer(name + "_batch_size",
                             batch_sizes.get(name, mode.batch_size),
                             batch_size_help, flag_values=flag_values)


def define_learning_rate_flags(epochs=True, learning_rate=5e-5,
                               flag_values=flags.FLAGS,
                               learning_rate_help=None):
    """Defines --learning_rate (default `learning_rate`; None: the task
    chooses, as `learning_rate_help` says) and, with `epochs`,
    --num_train_epochs and --warmup_proportion."""
    flags.DEFINE_float("learning_rate", learning_rate,
                       learning_rate_help
                       or "The initial learning rate for Adam.",
                       flag_values=flag_values)
    if epochs:
        flags.DEFINE_float("num_train_epochs", 3.0,
                           "Total number of training epochs to perform.",
                           flag_values=flag_values)
        flags.DEFINE_float(
            "warmup_proportion", 0.1,
            "Proportion of training to perform linear learning rate warmup "
            "for. E.g., 0.1 = 10% of training.", flag_values=flag_values)


def define_runtime_and_error_flags():
    """Defines the runtime flags (devices, precision, checkpoints) and
    `cli.define_common_flags()`, and lists both in the script's `--help`."""
    from bert_tf1.tasks import runtime_flags

    runtime_flags.define_runtime_flags()
    cli.define_common_flags()
    flags.adopt_module_key_flags(runtime_flags)
    flags.adopt_module_key_flags(cli)


def define_padding_flags(dynamic_padding=True, group_by_length=True):
    """Defines --dynamic_padding (default `dynamic_padding`; run_squad.py:
    False) and, with `group_by_length`, --group_by_length."""
    flags.DEFINE_bool(
        "dynamic_padding", dynamic_padding,
        "Cut each batch to its longest example (rounded up to a multiple of "
        "8) instead of --max_seq_length; the record files keep the fixed "
        "layout and per-token outputs are padded back. Fixed shapes under a "
        "TPU strategy and with --use_xla. See docs/fine_tuning_speed.md.")
    if group_by_length:
        flags.DEFINE_bool(
            "group_by_length", False,
            "Training batches of examples of similar length (each stretch of "
            "50 batches sorted by length, then its batches shuffled); every "
            "example still once per epoch. Needs --dynamic_padding.")


def define_evaluation_flags():
    """Defines the evaluation-during-training flags."""
    flags.DEFINE_bool(
        "eval_every_epoch", False,
        "With --do_train: evaluate on the eval data after every epoch "
        "(ceil(train examples / train_batch_size) steps), with the weights "
        "in memory; each evaluation is a line of output_dir/"
        "eval_history.jsonl and TensorBoard scalars.")
    flags.DEFINE_integer(
        "eval_steps", 0,
        "With --do_train: evaluate every this many steps instead (0: not).",
        lower_bound=0)
    flags.DEFINE_string(
        "keep_best_checkpoint", None,
        "A metric of eval_results.txt (e.g. eval_accuracy, eval_f1; "
        "eval_loss counts lower as better): keep the weights of the best "
        "evaluation during training in output_dir/best/; this run's "
        "--do_eval and --do_predict then use them.")
    flags.DEFINE_integer(
        "early_stopping_patience", 0,
        "Stop training after this many evaluations without improvement of "
        "--keep_best_checkpoint (0: never).", lower_bound=0)


def define_lora_flags():
    """Defines --lora_rank, --lora_alpha and --lora_targets (the fine-tuning
    scripts; `bert_tf1.tasks.configs.check_lora_flags`, docs/lora.md)."""
    from bert_tf1.modeling.layers import lora

    flags.DEFINE_integer(
        "lora_rank", 0,
        "LoRA: train rank-r adapters on --lora_targets of every encoder "
        "layer (Keras's Dense.enable_lora) and freeze the rest of the "
        "encoder; the head trains, and the pooler where the head reads it "
        "(classifier, multiple choice). 0: full fine-tuning. model.ckpt-N "
        "holds the merged kernels (any reader loads it); "
        "output_dir/lora_adapters.ckpt what trained.")
    flags.DEFINE_float(
        "lora_alpha", None,
        "LoRA scale numerator: the update is (alpha / rank) A B. Default: "
        "--lora_rank.")
    flags.DEFINE_string(
        "lora_targets", None,
        "Comma-separated sub-layers LoRA adapts, by their TF1 scope: "
        + ", ".join(lora.TARGETS) + ". Default: "
        + ",".join(lora.DEFAULT_TARGETS) + ".")


def define_export_flags():
    """Defines --export_dir and --export_format: a fine-tuning script
    exports the model it holds at the end of the run, whatever its
    create_model built (`bert_tf1.tasks.export_after_training`,
    docs/custom_models.md). The formats are named here, not imported:
    importing bert_tf1.serving would load it into every training run."""
    flags.DEFINE_string(
        "export_dir", None,
        "After the run: export the model to this folder (it must not exist; "
        "checked before training), as export_saved_model.py does, with this "
        "run's task, labels, vocab, casing and max_seq_length. The road out "
        "for a model of your own create_model (docs/custom_models.md).")
    flags.DEFINE_list(
        "export_format", None,
        "With --export_dir: deployment formats, comma-separated, one folder "
        "each under --export_dir: saved_model, numeric, openvino, litert, "
        "onnx (export_saved_model.py's --format, docs/deploying.md). Unset: "
        "one raw-text SavedModel at --export_dir.")


def define_served_model_flags():
    """Defines the labels and the SQuAD and tagger settings of a served
    model (`bert_tf1.tasks.export.ServedModelConfig`): export_saved_model.py,
    and predict_text.py with --init_checkpoint."""
    flags.DEFINE_string("task_name", None,
                        "Classifier: the run_classifier.py task (its label "
                        "list).")
    flags.DEFINE_list("label_list", None,
                      "Classifier: labels in id order, comma-separated "
                      "(instead of --task_name). Tagger: its tags, the same "
                      "way (instead of --label_list_file).")
    flags.DEFINE_integer("num_labels", None,
                         "Classifier: number of labels, named 0..n-1 "
                         "(instead of --task_name); 1 means regression.")
    flags.DEFINE_string(
        "label_list_file", None,
        "Tagger: its tags, one per line in id order (run_ner.py's "
        "label_list.txt; default: the label_list.txt beside "
        "--init_checkpoint).")
    flags.DEFINE_integer(
        "doc_stride", 128,
        "Tagger: when a text has more word pieces than fit in "
        "max_seq_length, how far (in pieces) each next window starts; every "
        "word is read in the window where it has the most context, as "
        "run_ner.py.")
    flags.DEFINE_integer("max_query_length", 64,
                         "SQuAD: the most tokens of the question (longer "
                         "ones are truncated).", lower_bound=1)
    flags.DEFINE_integer("max_answer_length", 30,
                         "SQuAD: the longest answer, in tokens.",
                         lower_bound=1)
    flags.DEFINE_integer("n_best_size", 20,
                         "SQuAD: the number of top start and end logits "
                         "considered for the answer.")


def served_model_overrides(flag_values=flags.FLAGS):
    """`config_from_flags` overrides for a served model: `do_lower_case`
    None when neither the flag nor --vocab_file is given (the model
    folder's record then decides, `bert_tf1.tasks.served_model`)."""
    given = flag_values["do_lower_case"].present or flag_values.vocab_file
    return {} if given else {"do_lower_case": None}


def define_batch_inference_flags():
    """Defines --runner, --num_workers, --beam_pipeline_options,
    --output_dir, --input_format, --text_feature, --max_tokens and
    --lines_per_shard (predict_text.py and extract_features.py on Beam,
    bert_tf1.tasks.batch_inference; `batch_options_from_flags` reads them)."""
    flags.DEFINE_string(
        "runner", "local", "local (one process, the default) or an Apache "
        "Beam runner: DirectRunner, DataflowRunner, FlinkRunner, SparkRunner "
        "(docs/batch_inference.md); with Beam the output is --output_dir.")
    flags.DEFINE_integer("num_workers", 1, "Beam worker processes "
                         "(DirectRunner), Dataflow's initial workers, "
                         "Flink's parallelism.")
    flags.DEFINE_string("beam_pipeline_options", "", "The Beam runner's "
                        "options, as a command line.")
    flags.DEFINE_string("output_dir", None, "With --runner: the folder of "
                        "output shards (JSON lines, or Parquet for "
                        "embeddings), _PLAN.json and _SUCCESS.")
    flags.DEFINE_enum("input_format", "text", ["text", "tfrecord"],
                      "With --runner: text lines, or tf.train.Example "
                      "records.")
    flags.DEFINE_string("text_feature", None, "With --input_format=tfrecord:"
                        " the string feature of the text (two, comma-"
                        "separated, for pairs).")
    flags.DEFINE_integer("max_tokens", 8192, "With --runner: the most "
                         "tokens of a batch, padding included.")
    flags.DEFINE_integer("lines_per_shard", 100000, "With --runner: input "
                         "lines per output shard.")


def batch_options_from_flags():
    """bert_tf1.tasks.batch_inference.BatchOptions of the flags above."""
    from bert_tf1.tasks.batch_inference import BatchOptions

    return cli.config_from_flags(BatchOptions)
