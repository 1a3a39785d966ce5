// Docstrings, with runnable examples (doctests), of the functions bound in
// ops.cpp that are not declared ops (Note [op declarations] generates those).
#pragma once

namespace oar::bind::docs {

inline constexpr const char* cast = R"(Converts x to dtype (a name such as 'float16' or an oar dtype).

>>> import oar
>>> oar.cast(oar.to_tensor([1.7, -2.2]), "int32").numpy().tolist()
[1, -2]
)";

inline constexpr const char* clone = R"(A copy of x with its own memory; gradients flow back to x.

>>> import oar
>>> x = oar.to_tensor([1.0, 2.0])
>>> y = oar.clone(x)
>>> _ = y.fill_(0.0)
>>> x.numpy().tolist()
[1.0, 2.0]
)";

inline constexpr const char* where = R"(Elementwise choice: x where condition is true, else y (tensors or numbers; broadcast).

>>> import oar
>>> c = oar.to_tensor([True, False, True])
>>> oar.where(c, oar.to_tensor([1, 2, 3]), oar.to_tensor([7, 8, 9])).numpy().tolist()
[1, 8, 3]
)";

inline constexpr const char* clip = R"(Limits x to [min, max]; either bound may be None.

>>> import oar
>>> oar.clip(oar.to_tensor([-2.0, 0.5, 3.0]), min=-1.0, max=1.0).numpy().tolist()
[-1.0, 0.5, 1.0]
)";

inline constexpr const char* complex = R"(The complex tensor real + 1j * imag (float32 -> complex64, float64 -> complex128).

>>> import oar
>>> oar.complex(oar.to_tensor([1.0]), oar.to_tensor([2.0])).numpy().tolist()
[(1+2j)]
)";

inline constexpr const char* reshape = R"(x with a new shape of the same size; -1 infers one dim, 0 copies x's dim at that position.
A view when the strides allow, else a copy.

>>> import oar
>>> oar.reshape(oar.arange(6), [2, -1]).numpy().tolist()
[[0, 1, 2], [3, 4, 5]]
>>> oar.reshape(oar.ones([2, 3]), [0, 3, 1]).shape
[2, 3, 1]
)";

inline constexpr const char* transpose = R"(x with its dims permuted by perm (a view).

>>> import oar
>>> oar.transpose(oar.ones([2, 3, 4]), [2, 0, 1]).shape
[4, 2, 3]
)";

inline constexpr const char* expand = R"(x broadcast to shape (a view; -1 keeps x's dim).

>>> import oar
>>> oar.expand(oar.to_tensor([[1], [2]]), [2, 3]).numpy().tolist()
[[1, 1, 1], [2, 2, 2]]
)";

inline constexpr const char* squeeze = R"(x without the size-1 dims at axis (all of them when axis is None).

>>> import oar
>>> oar.squeeze(oar.ones([1, 3, 1]), axis=0).shape, oar.squeeze(oar.ones([1, 3, 1])).shape
([3, 1], [3])
)";

inline constexpr const char* unsqueeze = R"(x with size-1 dims inserted at axis (an int or a list).

>>> import oar
>>> oar.unsqueeze(oar.ones([3]), [0, 2]).shape
[1, 3, 1]
)";

inline constexpr const char* flatten = R"(x with dims start_axis..stop_axis merged into one.

>>> import oar
>>> oar.flatten(oar.ones([2, 3, 4]), start_axis=1).shape
[2, 12]
)";

inline constexpr const char* strided_slice = R"(x[starts:ends:strides] along axes (a view).

>>> import oar
>>> oar.strided_slice(oar.arange(10), axes=[0], starts=[1], ends=[8], strides=[3]).numpy().tolist()
[1, 4, 7]
)";

inline constexpr const char* slice_scatter = R"(A copy of x whose slice starts:ends:strides along axes holds value.

>>> import oar
>>> x = oar.zeros([5], dtype="int64")
>>> oar.slice_scatter(x, oar.to_tensor([7, 8]), axes=[0], starts=[1], ends=[5], strides=[2]).numpy().tolist()
[0, 7, 0, 8, 0]
)";

inline constexpr const char* matmul = R"(The matrix product of x and y with NumPy's broadcasting of batch dims; a 1-D operand
is a vector. transpose_x / transpose_y transpose the last two dims first.

>>> import oar
>>> a = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> oar.matmul(a, a, transpose_y=True).numpy().tolist()
[[5.0, 11.0], [11.0, 25.0]]
)";

inline constexpr const char* set_num_threads = R"(Sets how many threads oar's CPU kernels use.

>>> import oar
>>> n = oar.get_num_threads()
>>> oar.set_num_threads(1)
>>> oar.get_num_threads()
1
>>> oar.set_num_threads(n)
)";

inline constexpr const char* get_num_threads = R"(How many threads oar's CPU kernels use.

>>> import oar
>>> oar.get_num_threads() >= 1
True
)";

}  // namespace oar::bind::docs
