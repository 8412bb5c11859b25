"""Helper for tests/data/tokenization/test_in_graph.py: pure-Python ids in a worker
process (kept apart from the test module so that spawned workers do not
import TensorFlow)."""
from bert_tf1.data.tokenization import full_tokenizer as tokenization


def python_ids(args):
    """(vocab_file, do_lower_case, texts) -> list of id lists."""
    vocab_file, do_lower_case, texts = args
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case)
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
            for text in texts]
