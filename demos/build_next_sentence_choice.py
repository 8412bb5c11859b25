"""Builds the next-sentence multiple-choice demo task from the shared text.

    python demos/build_next_sentence_choice.py \\
        --data_dir=../shared/data/pretraining --output_dir=/tmp/next_sentence

writes `train.tsv` and `dev.tsv` in the multiple-choice `tsv` layout
(`id  context  ending0 .. ending3  label`, read with --data_format=tsv):
context = a sentence, the right ending = the next sentence of its document,
three distractors from other documents, split by document so that dev
documents are never trained on (demos/next_sentence/next_sentence_task.py).
Prints the numbers of documents, sentences and rows.
"""
import argparse
import os
import sys

# The checkout this script is in comes first (an installed copy may be older).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bert_tf1.data.io.errors import UserError  # noqa: E402
from demos.next_sentence import next_sentence_task  # noqa: E402


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default="../shared/data/pretraining",
                        help="folder with sample_text.txt, "
                             "pg1342_pride_and_prejudice.txt and "
                             "wikitext-2-raw_wiki.test.raw (or its parent)")
    parser.add_argument("--output_dir", required=True,
                        help="where train.tsv and dev.tsv are written")
    parser.add_argument("--seed", type=int, default=12345,
                        help="the only source of randomness")
    parser.add_argument("--num_choices", type=int, default=4)
    parser.add_argument("--min_dev_rows", type=int, default=1000,
                        help="the least number of held-out rows")
    parser.add_argument("--train_text_file", default=None,
                        help="also write the train documents' sentences "
                             "here (one per line, a blank line between "
                             "documents: create_pretraining_data.py's "
                             "input), dev documents left out")
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse_args(argv)
    if args.num_choices < 2 or args.min_dev_rows < 1:
        print("error: --num_choices must be >= 2 and --min_dev_rows >= 1",
              file=sys.stderr)
        return 2
    try:
        documents = next_sentence_task.read_shared_documents(args.data_dir)
        task = next_sentence_task.build_next_sentence_task(
            documents, seed=args.seed, num_choices=args.num_choices,
            min_dev_rows=args.min_dev_rows)
        paths = next_sentence_task.write_next_sentence_task(task,
                                                            args.output_dir)
        if args.train_text_file:
            sentences = next_sentence_task.write_training_text(
                task, documents, args.train_text_file)
    except UserError as error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    stats = task.stats
    print("documents: %d (train %d, dev %d, %d without a usable pair)" % (
        stats["documents"], stats["train_documents"], stats["dev_documents"],
        stats["unused_documents"]))
    print("sentences: %d (%d with >= 4 words)" % (
        stats["sentences"], stats["eligible_sentences"]))
    print("rows: train %d, dev %d (of %d sentence pairs)" % (
        stats["train_rows"], stats["dev_rows"], stats["candidate_rows"]))
    for name in ("train.tsv", "dev.tsv"):
        print("wrote %s" % paths[name])
    if args.train_text_file:
        print("wrote %s (%d sentences of the %d train documents)" % (
            args.train_text_file, sentences, stats["train_documents"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
