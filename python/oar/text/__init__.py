"""Text: data sets (paddle.text.datasets), Viterbi decoding and small text models."""
from . import datasets, models, viterbi  # noqa: F401
from .datasets import Conll05st, Imdb, Imikolov, Movielens, UCIHousing, WMT14, WMT16  # noqa: F401
from .models import *  # noqa: F401,F403
from .models import __all__ as _models_all
from .viterbi import ViterbiDecoder, viterbi_decode

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16", "ViterbiDecoder",
           "viterbi_decode"] + list(_models_all)
