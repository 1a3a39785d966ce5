"""Transformer language models with PaddleNLP-style names: BERT and GPT."""
from .bert import *  # noqa: F401,F403
from .bert import __all__ as _bert_all
from .gpt import *  # noqa: F401,F403
from .gpt import __all__ as _gpt_all

__all__ = _bert_all + _gpt_all
