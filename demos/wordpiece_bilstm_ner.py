"""run_ner.py with the NER demo's no-BERT baseline as the model.

    python demos/wordpiece_bilstm_ner.py --train_file=... --eval_file=... \
        --vocab_file=... --bert_config_file=... --output_dir=... \
        --do_train --do_eval --lstm_units=64 [run_ner.py's other flags]

The same data path, windows, files and flags as run_ner.py, but the model is
`demos.ner.bilstm_tagger.WordPieceBiLSTMTagger` (`demos.ner.task`): randomly initialised
word-piece embeddings (the config's vocab_size x hidden_size), run_ner.py's
feature-based two-layer BiLSTM (--lstm_units) and a classifier, trained from
scratch, so demos/ner.sh can show what pre-trained BERT adds. There is no BERT
encoder: --init_checkpoint and --feature_layers are refused.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bert_tf1.run_ner  # noqa: E402,F401  (defines run_ner.py's flags)
from demos.ner.task import WordPieceBiLSTMTaggingTask  # noqa: E402
from bert_tf1.tasks import cli  # noqa: E402
from bert_tf1.tasks.tagging import TaggingConfig  # noqa: E402


def main():
    """Flags -> `TaggingConfig` -> `WordPieceBiLSTMTaggingTask.run()`."""
    WordPieceBiLSTMTaggingTask(cli.config_from_flags(TaggingConfig)).run()


if __name__ == "__main__":
    cli.main(main)
