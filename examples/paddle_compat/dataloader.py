"""paddle.io: Dataset, TensorDataset, samplers, random_split, DataLoader batching and collate."""
import numpy as np
import paddle
from paddle.io import BatchSampler, DataLoader, Dataset, SequenceSampler, Subset, TensorDataset

from _common import show


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.array([i, i * i], "float32"), np.array(i % 3, "int64"), {"id": i}

    def __len__(self):
        return self.n


ds = Squares(10)
loader = DataLoader(ds, batch_size=4, shuffle=False, drop_last=False)
show("num_batches", len(loader))
for i, (x, y, meta) in enumerate(loader):
    show(f"batch{i}", [str(list(x.shape)), str(x.dtype).split(".")[-1], str(list(y.shape)),
                       str(y.numpy().tolist()), str(meta["id"].numpy().tolist())])
show("drop_last", len(DataLoader(ds, batch_size=4, drop_last=True)))
td = TensorDataset([paddle.arange(6, dtype="float32").reshape([6, 1]), paddle.arange(6)])
show("tensor_dataset", [len(td), float(td[2][0][0]), int(td[2][1])])
bs = BatchSampler(sampler=SequenceSampler(ds), batch_size=3, drop_last=False)
show("batch_sampler", [str(b) for b in bs])
sub = Subset(ds, [1, 3, 5])
show("subset", [float(sub[1][0][1]), len(sub)])
lengths = [len(s) for s in paddle.io.random_split(ds, [7, 3])]
show("random_split_lengths", lengths)


def collate(batch):
    xs = np.stack([b[0] for b in batch])
    return paddle.to_tensor(xs.sum(axis=1))


show("collate_fn", next(iter(DataLoader(ds, batch_size=5, collate_fn=collate))))
paddle.seed(1)
shuffled = [b[2]["id"].numpy().tolist() for b in DataLoader(ds, batch_size=5, shuffle=True)]
show("shuffle_is_permutation", sorted(sum(shuffled, [])) == list(range(10)))
it = DataLoader(ds, batch_size=2, return_list=True)
show("return_list_type", type(next(iter(it))).__name__)
