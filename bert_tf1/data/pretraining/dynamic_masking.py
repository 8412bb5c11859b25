"""Dynamic masking (RoBERTa-style, not in the original): fresh masked-LM masks
each time a record is read.

The stored masks are undone and keras_hub's MaskedLMMaskGenerator draws new
ones (80% [MASK] / 10% random / 10% unchanged). It masks ceil(masked_lm_prob *
maskable tokens), not the original's round(masked_lm_prob * n) with [CLS] and
[SEP] counted (docs/limits.md); no whole word masking.
"""
import keras_hub
import tensorflow as tf


def restore_masked_tokens(input_ids, masked_lm_positions, masked_lm_ids,
                          masked_lm_weights):
    """Puts the masked-LM labels back at their positions.

    Args:
      input_ids: int [B, S] (or [S]), masked ids.
      masked_lm_positions, masked_lm_ids: int [B, P] (or [P]).
      masked_lm_weights: float [B, P] (or [P]); weight 0 is padding.

    Returns:
      int tensor like input_ids holding the unmasked token ids.
    """
    unbatched = input_ids.shape.rank == 1
    if unbatched:
        input_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights = (
            t[tf.newaxis] for t in (input_ids, masked_lm_positions,
                                    masked_lm_ids, masked_lm_weights))
    real = masked_lm_weights > 0
    rows = tf.cast(tf.where(real)[:, 0], masked_lm_positions.dtype)
    columns = tf.boolean_mask(masked_lm_positions, real)
    indices = tf.stack([rows, columns], axis=1)
    updates = tf.cast(tf.boolean_mask(masked_lm_ids, real), input_ids.dtype)
    restored = tf.tensor_scatter_nd_update(input_ids, indices, updates)
    return restored[0] if unbatched else restored


class DynamicMasking:
    """A tf.data map function that re-draws the masked-LM masks.

    Args:
      vocab_size: int (random tokens are drawn from [0, vocab_size)).
      mask_token_id, cls_token_id, sep_token_id: int ids.
      max_predictions_per_seq: int, P of the records.
      masked_lm_prob: float, share of maskable tokens to mask.

    Call with a dict of features of pretraining_dataset ([B, ...] or not);
    returns the same keys, shapes and dtypes with new masks.
    """

    def __init__(self, vocab_size, mask_token_id, cls_token_id, sep_token_id,
                 max_predictions_per_seq=20, masked_lm_prob=0.15):
        self.max_predictions_per_seq = max_predictions_per_seq
        self.generator = keras_hub.layers.MaskedLMMaskGenerator(
            vocabulary_size=vocab_size,
            mask_selection_rate=masked_lm_prob,
            mask_token_id=mask_token_id,
            mask_selection_length=max_predictions_per_seq,
            unselectable_token_ids=[cls_token_id, sep_token_id],
            mask_token_rate=0.8,
            random_token_rate=0.1)
        # Eagerly keras_hub returns Python lists; in a tf.function, tensors.
        self._remask = tf.function(self._remask_features, autograph=False)

    @classmethod
    def from_tokenizer(cls, tokenizer, max_predictions_per_seq=20,
                       masked_lm_prob=0.15):
        """Builds it from a FullTokenizer's vocab ([MASK], [CLS], [SEP])."""
        vocab = tokenizer.vocab
        return cls(len(tokenizer.inv_vocab), vocab["[MASK]"], vocab["[CLS]"],
                   vocab["[SEP]"], max_predictions_per_seq, masked_lm_prob)

    def __call__(self, features):
        return self._remask(dict(features))

    def _remask_features(self, features):
        features = dict(features)
        unbatched = features["input_ids"].shape.rank == 1
        batch = {key: value[tf.newaxis] if unbatched else value
                 for key, value in features.items()}
        original = restore_masked_tokens(
            batch["input_ids"], batch["masked_lm_positions"],
            batch["masked_lm_ids"], batch["masked_lm_weights"])
        # Ragged rows hold the real tokens only, so padding is never masked.
        lengths = tf.reduce_sum(tf.cast(batch["input_mask"], tf.int64), axis=1)
        output = self.generator(
            tf.RaggedTensor.from_tensor(original, lengths=lengths))
        result = {
            "input_ids": output["token_ids"].to_tensor(
                default_value=0, shape=tf.shape(original, out_type=tf.int64)),
            "masked_lm_positions": output["mask_positions"],
            "masked_lm_ids": output["mask_ids"],
            "masked_lm_weights": output["mask_weights"],
        }
        for key, value in result.items():
            value = tf.cast(value[0] if unbatched else value,
                            features[key].dtype)
            features[key] = tf.ensure_shape(value, features[key].shape)
        return features
