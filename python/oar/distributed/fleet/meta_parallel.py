"""``paddle.distributed.fleet.meta_parallel``: manual tensor- and pipeline-parallel layers."""
from ..mp_layers import ColumnParallelLinear, ParallelCrossEntropy, RowParallelLinear, VocabParallelEmbedding
from ..pipeline import LayerDesc, PipelineLayer, PipelineParallel, SharedLayerDesc

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding", "ParallelCrossEntropy",
           "LayerDesc", "SharedLayerDesc", "PipelineLayer", "PipelineParallel"]
