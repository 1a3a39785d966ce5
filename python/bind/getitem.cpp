// Tensor.__getitem__ and Tensor.__setitem__: the index object is walked here
// and turned into calls of the view and index ops, with NumPy's rules.
//
// Note [tensor indexing]
// An index is a tuple of items (a single item is a 1-tuple): ints, slices,
// None, one Ellipsis ("basic" items) and int or bool arrays (Tensors, lists,
// NumPy arrays; "advanced" items). A Python bool is a 0-D bool array and a
// 0-D int Tensor or NumPy integer an int (a 0-D int Tensor stays an array
// while tracing, so that the program reads its value at run time).
//
// Basic indexing is one strided_slice over the sliced and int axes, a squeeze
// of the int axes and an unsqueeze of the new ones: a view of x. Slice bounds
// go to the op as written, omitted ones as the "to the end" sentinels, and ':'
// makes no slice at all (Note [slice bounds] in src/ops/shape.cpp), so a
// traced program stays right for other sizes of a dynamic dim. x[-1] is the
// slice [-1:] for the same reason.
//
// With an advanced item, ints count as advanced too (NumPy's rule). The
// slices apply first (strided_slice, no squeeze) and the new axes are
// inserted (a 0-D bool adds one, indexed by [0] if True and [] if False);
// then every advanced dim is indexed by an int64 tensor: an int array's own
// values, an int's 0-D tensor, or one column of nonzero(mask) per dim a bool
// mask covers. The index tensors broadcast to one shape B; the advanced dims
// move to the front and one gather_nd over the stacked [B..., k] index reads
// them, giving B + the other dims. When the advanced items are adjacent in
// the index, the B dims are moved back to where the first one was; when a
// slice, None or Ellipsis separates them they stay in front. Reading is
// therefore differentiable like any op. A single bool mask over the leading
// dims is gather_nd(x, nonzero(mask)) and a single int array an index_select
// of its flattened values.
//
// Writing finds the positions that the same index reads: the pipeline runs on
// an int64 grid of x's linear positions (arange(numel) in x's shape, no
// autograd), and the positions are unravelled into coordinates for one
// scatter_nd_ into x's own storage. Basic writes are one slice_scatter_ (or
// copy_ for x[...] = v), and the two fast paths of reading have matching
// writes.
#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <vector>

#include "args.h"
#include "autograd/autograd.h"
#include "ops/dispatch.h"
#include "ops/index.h"
#include "ops/manip.h"

namespace oar::bind {
namespace {

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
constexpr int64_t kToBegin = std::numeric_limits<int64_t>::min();
constexpr const char* kGet = "Tensor.__getitem__";
constexpr const char* kSet = "Tensor.__setitem__";

struct Item {
  enum Kind { Int, Slice, NewAxis, Ellipsis, Array } kind = NewAxis;
  int64_t start = 0, stop = 0, step = 1;  // Int: start is the value
  bool whole = false;                     // Slice ':' (no bounds, step 1)
  Tensor array;                           // Array: an integer (any width) or bool tensor
  PyObject* src = nullptr;                // Int: the Python object (borrowed), for messages
  bool overflow = false;                  // Int: beyond int64
};
using Items = SmallVector<Item, 6>;

// A slice bound or step: an int, an object with __index__ or a one-element integer tensor.
int64_t slice_value(PyObject* o, const char* api) {
  if (PyLong_Check(o)) return clamped(o);
  if (TensorImpl* t = as_tensor(o)) {
    OAR_CHECK(t->numel == 1, Value, "[", api, "] a tensor slice bound must have one element, got shape ",
              ops::shape_str(t->shape));
    OAR_CHECK(is_integer_dtype(t->dtype), Type, "[", api, "] a tensor slice bound must have an integer dtype, got ",
              dtype_name(t->dtype));
    return int_value(Tensor(t));
  }
  if (PyIndex_Check(o)) {
    nb::object i = nb::steal(PyNumber_Index(o));
    if (!i.is_valid()) throw nb::python_error();
    return clamped(i.ptr());
  }
  fail(ErrorKind::Type, "[", api, "] slice bounds must be ints, None or one-element integer tensors, got ",
       type_name(o));
}

// ---- parsing

[[noreturn]] void bad_item(PyObject* o, const char* api) {
  fail(ErrorKind::Index, "[", api, "] only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
       "arrays are valid indices, got ", type_name(o));
}

// An array index: bool, or an integer array (a float one only when empty, as NumPy allows).
Tensor index_array(const Tensor& t, const char* api, const char* what) {
  DType dt = t.dtype();
  if (dt == DType::Bool || is_integer_dtype(dt)) return t;
  if (t.numel() == 0 && !is_complex(dt)) return ops::cast(t, DType::Int64);
  fail(ErrorKind::Index, "[", api, "] ", what, " indices must hold ints or bools, got ", dtype_name(dt));
}

Item parse_item(PyObject* o, const char* api) {
  Item it;
  if (o == Py_None) return it;
  if (o == Py_Ellipsis) { it.kind = Item::Ellipsis; return it; }
  if (PySlice_Check(o)) {
    auto* s = reinterpret_cast<PySliceObject*>(o);
    it.kind = Item::Slice;
    it.step = s->step == Py_None ? 1 : slice_value(s->step, api);
    OAR_CHECK(it.step != 0, Value, "[", api, "] slice step cannot be zero");
    if (s->start == Py_None && s->stop == Py_None && it.step == 1) { it.whole = true; return it; }
    it.start = s->start != Py_None ? slice_value(s->start, api) : it.step > 0 ? 0 : kToEnd;
    it.stop = s->stop != Py_None ? slice_value(s->stop, api) : it.step > 0 ? kToEnd : kToBegin;
    return it;
  }
  if (PyBool_Check(o)) {
    it.kind = Item::Array;
    it.array = ops::full(Dims{}, Scalar(o == Py_True), DType::Bool);
    return it;
  }
  if (PyLong_Check(o)) {
    it.kind = Item::Int;
    it.start = clamped(o, &it.overflow);
    it.src = o;
    return it;
  }
  if (TensorImpl* p = as_tensor(o)) {
    Tensor t(p);
    DType dt = t.dtype();
    OAR_CHECK(dt == DType::Bool || is_integer_dtype(dt), Index, "[", api,
              "] tensor indices must be integer or bool tensors, got ", dtype_name(dt));
    // Under a trace the value is data of the program, not a number to bake
    // in: a 0-D integer array (advanced indexing gives what the int would).
    if (dt != DType::Bool && t.dim() == 0 && !dispatch_state().tracing) {
      it.kind = Item::Int;
      it.start = int_value(t);
      return it;
    }
    it.kind = Item::Array;
    it.array = t;
    return it;
  }
  if (is_seq(o)) {
    Tensor t = list_tensor(o, true);
    OAR_CHECK(t.defined(), Index, "[", api, "] list indices must be rectangular nests of ints or bools");
    it.kind = Item::Array;
    it.array = placed(t);
    return it;
  }
  if (is_numpy(o)) {
    Tensor t = numpy_tensor(o, api);
    if (!t.defined()) bad_item(o, api);
    if (t.dim() == 0 && is_integer_dtype(t.dtype())) {
      it.kind = Item::Int;
      it.start = int_value(t);
      return it;
    }
    if (t.dim() == 0 && t.dtype() != DType::Bool) bad_item(o, api);
    it.kind = Item::Array;
    // A copy: the array's memory stays the caller's, and a gradient rule that
    // keeps the index must not see later changes to it.
    it.array = placed(ops::clone(index_array(t, api, "array")));
    return it;
  }
  if (PyIndex_Check(o)) {
    nb::object i = nb::steal(PyNumber_Index(o));
    if (!i.is_valid()) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();
      PyErr_Clear();
      bad_item(o, api);
    }
    it.kind = Item::Int;
    it.start = clamped(i.ptr(), &it.overflow);
    it.src = o;
    return it;
  }
  bad_item(o, api);
}

struct Parsed {
  Items items;
  bool advanced = false;
};

// Splits the index into items and checks their count against x's dims.
Parsed parse(const Tensor& x, PyObject* index, const char* api) {
  Parsed p;
  if (PyTuple_Check(index)) {
    Py_ssize_t n = PyTuple_GET_SIZE(index);
    p.items.reserve(size_t(n));
    for (Py_ssize_t j = 0; j < n; ++j) p.items.push_back(parse_item(PyTuple_GET_ITEM(index, j), api));
  } else {
    p.items.push_back(parse_item(index, api));
  }
  int64_t consumed = 0, ellipses = 0;
  for (const Item& it : p.items) {
    switch (it.kind) {
      case Item::Ellipsis: ++ellipses; break;
      case Item::NewAxis: break;
      case Item::Array:
        p.advanced = true;
        consumed += it.array.dtype() == DType::Bool ? it.array.dim() : 1;
        break;
      default: ++consumed;
    }
  }
  OAR_CHECK(ellipses <= 1, Index, "[", api, "] an index can only have a single ellipsis ('...')");
  OAR_CHECK(consumed <= x.dim(), Index, "[", api, "] too many indices: the tensor is ", x.dim(), "-D but ", consumed,
            " were given");
  return p;
}

[[noreturn]] void int_out_of_bounds(const Item& it, int64_t axis, int64_t n, const char* api) {
  if (it.overflow) {
    nb::str s = nb::str(nb::handle(it.src));
    fail(ErrorKind::Index, "[", api, "] index ", s.c_str(), " is out of bounds for axis ", axis, " with size ", n);
  }
  fail(ErrorKind::Index, "[", api, "] index ", it.start, " is out of bounds for axis ", axis, " with size ", n);
}

// Dims taken by each item from x (the Ellipsis: what the others leave).
int64_t ellipsis_dims(const Tensor& x, const Items& items) {
  int64_t used = 0;
  for (const Item& it : items) {
    if (it.kind == Item::Int || it.kind == Item::Slice) ++used;
    else if (it.kind == Item::Array) used += it.array.dtype() == DType::Bool ? it.array.dim() : 1;
  }
  return x.dim() - used;
}

// ---- basic indexing

struct Basic {
  Dims axes, starts, ends, steps, int_axes, new_axes;
};

Basic plan_basic(const Tensor& x, const Items& items, const char* api) {
  Basic b;
  int64_t dim = 0, out = 0;
  for (const Item& it : items) {
    switch (it.kind) {
      case Item::Ellipsis: {
        int64_t skip = ellipsis_dims(x, items);
        dim += skip, out += skip;
        break;
      }
      case Item::NewAxis: b.new_axes.push_back(out++); break;
      case Item::Slice:
        if (!it.whole) {
          b.axes.push_back(dim), b.starts.push_back(it.start), b.ends.push_back(it.stop);
          b.steps.push_back(it.step);
        }
        ++dim, ++out;
        break;
      case Item::Int: {
        int64_t n = x.shape()[size_t(dim)], i = it.start;
        if (it.overflow || i < -n || i >= n) int_out_of_bounds(it, dim, n, api);
        b.axes.push_back(dim), b.starts.push_back(i), b.ends.push_back(i == -1 ? kToEnd : i + 1);
        b.steps.push_back(1);
        b.int_axes.push_back(dim++);
        break;
      }
      case Item::Array: break;  // not reached: basic indices only
    }
  }
  return b;
}

Tensor apply_basic(const Tensor& x, const Basic& b) {
  Tensor out = b.axes.empty() ? x : ops::strided_slice(x, b.axes, b.starts, b.ends, b.steps);
  if (!b.int_axes.empty()) out = ops::squeeze(out, b.int_axes);
  if (!b.new_axes.empty()) out = ops::unsqueeze(out, b.new_axes);
  return out;
}

// Length of x[start:stop:step] along a dim of size n (Note [slice bounds]).
int64_t slice_len(int64_t start, int64_t stop, int64_t step, int64_t n) {
  auto bound = [&](int64_t v) {
    if (v < 0) v += n;
    return step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
  };
  int64_t s = bound(start), e = bound(stop);
  if (step > 0) return s < e ? (e - s - 1) / step + 1 : 0;
  return s > e ? (s - e - 1) / (-step) + 1 : 0;
}

// The shape of apply_basic(x, b), without running it.
Dims basic_shape(const Tensor& x, const Basic& b) {
  Dims s = x.shape();
  for (size_t j = 0; j < b.axes.size(); ++j) {
    int64_t ax = b.axes[j];
    s[size_t(ax)] = slice_len(b.starts[j], b.ends[j], b.steps[j], s[size_t(ax)]);
  }
  Dims out;
  for (size_t d = 0, k = 0; d < s.size(); ++d) {
    if (k < b.int_axes.size() && b.int_axes[k] == int64_t(d)) { ++k; continue; }
    out.push_back(s[d]);
  }
  for (int64_t a : b.new_axes) out.insert(size_t(a), 1);
  return out;
}

// ---- advanced indexing

// Rewrites an index op's IndexError as the API's, with the index op's axis
// (axis_map[axis]) named as x's.
template <typename F> Tensor renamed_index_errors(F&& f, const char* api, const Dims& axis_map) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Index) throw;
    std::string m = e.what();
    size_t close = m.find("] ");
    if (close == std::string::npos) throw;
    m = std::string("[") + api + m.substr(close);
    const std::string key = " for axis ";
    size_t at = m.find(key);
    if (at != std::string::npos) {
      size_t b = at + key.size(), end = b;
      while (end < m.size() && std::isdigit(static_cast<unsigned char>(m[end]))) ++end;
      if (end > b) {
        size_t ax = size_t(std::stoll(m.substr(b, end - b)));
        if (ax < axis_map.size()) m = m.substr(0, b) + std::to_string(axis_map[ax]) + m.substr(end);
      }
    }
    throw Error(ErrorKind::Index, m);
  }
}

bool is_mask(const Item& it) { return it.kind == Item::Array && it.array.dtype() == DType::Bool; }

// A single bool mask over x's leading dims (the only item).
bool leading_mask(const Tensor& x, const Items& items) {
  if (items.size() != 1 || !is_mask(items[0])) return false;
  const Tensor& m = items[0].array;
  if (m.dim() < 1 || m.dim() > x.dim()) return false;
  for (int64_t d = 0; d < m.dim(); ++d)
    if (m.shape()[size_t(d)] != x.shape()[size_t(d)]) return false;
  return true;
}

// A single int array (the only item).
bool single_int_array(const Tensor& x, const Items& items) {
  return items.size() == 1 && items[0].kind == Item::Array && !is_mask(items[0]) && x.dim() >= 1;
}

Tensor as_index(const Tensor& t) {
  return t.dtype() == DType::Int32 || t.dtype() == DType::Int64 ? t : ops::cast(t, DType::Int64);
}

Tensor advanced_get(const Tensor& x, const Items& items, const char* api) {
  OAR_CHECK(x.dim() > 0, Index, "[", api, "] a 0-D tensor cannot be indexed with tensors or lists");
  if (leading_mask(x, items)) return ops::gather_nd(x, ops::nonzero(items[0].array));
  if (single_int_array(x, items)) {
    const Tensor& idx = as_index(items[0].array);
    Tensor out = renamed_index_errors(
        [&] { return ops::index_select(x, ops::reshape(idx, Dims{idx.numel()}), 0); }, api, Dims{0});
    Dims shape = idx.shape();
    for (int64_t d = 1; d < x.dim(); ++d) shape.push_back(x.shape()[size_t(d)]);
    return ops::reshape(out, shape);
  }

  // Slices and new axes first; then one index tensor per advanced dim of y.
  Dims axes, starts, ends, steps, new_axes;
  SmallVector<Tensor, 6> index;  // per advanced dim of y, in order
  Dims adv_dims;                 // their dims in y
  Dims x_axis;                   // and in x (for messages)
  int64_t dim = 0, ydim = 0, first_item = -1, last_item = -1, n_adv_items = 0;
  const int64_t skip = ellipsis_dims(x, items);
  for (size_t j = 0; j < items.size(); ++j) {
    const Item& it = items[j];
    bool adv = it.kind == Item::Int || it.kind == Item::Array;
    if (adv) {
      if (first_item < 0) first_item = int64_t(j);
      last_item = int64_t(j);
      ++n_adv_items;
    }
    switch (it.kind) {
      case Item::Ellipsis: dim += skip, ydim += skip; break;
      case Item::NewAxis: new_axes.push_back(ydim++); break;
      case Item::Slice:
        if (!it.whole) {
          axes.push_back(dim), starts.push_back(it.start), ends.push_back(it.stop), steps.push_back(it.step);
        }
        ++dim, ++ydim;
        break;
      case Item::Int: {
        int64_t n = x.shape()[size_t(dim)];
        if (it.overflow || it.start < -n || it.start >= n) int_out_of_bounds(it, dim, n, api);
        index.push_back(ops::full(Dims{}, Scalar(it.start), DType::Int64));
        adv_dims.push_back(ydim++), x_axis.push_back(dim++);
        break;
      }
      case Item::Array: {
        const Tensor& a = it.array;
        if (a.dtype() != DType::Bool) {
          index.push_back(as_index(a));
          adv_dims.push_back(ydim++), x_axis.push_back(dim++);
          break;
        }
        if (a.dim() == 0) {  // a new dim of size 1, indexed by [0] (True) or [] (False)
          new_axes.push_back(ydim);
          index.push_back(ops::zeros(Dims{int_value(ops::cast(a, DType::Int64))}, DType::Int64));
          adv_dims.push_back(ydim++), x_axis.push_back(-1);
          break;
        }
        for (int64_t d = 0; d < a.dim(); ++d) {
          int64_t n = x.shape()[size_t(dim + d)], m = a.shape()[size_t(d)];
          OAR_CHECK(n == m, Index, "[", api, "] boolean index did not match indexed tensor along axis ", dim + d,
                    "; size of axis is ", n, " but size of corresponding boolean axis is ", m);
        }
        Tensor nz = ops::nonzero(a);  // [count, k]
        if (a.dim() == 1) {
          index.push_back(ops::reshape(nz, Dims{nz.shape()[0]}));
        } else {
          for (const Tensor& col : ops::unbind(nz, 1)) index.push_back(col);
        }
        for (int64_t d = 0; d < a.dim(); ++d) adv_dims.push_back(ydim++), x_axis.push_back(dim++);
        break;
      }
    }
  }
  Tensor y = axes.empty() ? x : ops::strided_slice(x, axes, starts, ends, steps);
  if (!new_axes.empty()) y = ops::unsqueeze(y, new_axes);

  // The broadcast shape of the index tensors.
  Dims b;
  for (const Tensor& t : index) {
    const Dims& s = t.shape();
    const size_t n = std::max(b.size(), s.size());
    Dims both(n, 1);
    for (size_t j = 0; j < n; ++j) {
      int64_t u = j + b.size() >= n ? b[j + b.size() - n] : 1;
      int64_t v = j + s.size() >= n ? s[j + s.size() - n] : 1;
      if (u != v && u != 1 && v != 1) {
        std::string shapes;
        for (const Tensor& q : index) shapes += " " + ops::shape_str(q.shape());
        fail(ErrorKind::Index, "[", api, "] shape mismatch: indexing arrays could not be broadcast together with "
             "shapes", shapes);
      }
      both[j] = u == 1 ? v : u;
    }
    b = both;
  }

  // Advanced dims to the front, then one gather_nd.
  const int64_t yd = y.dim(), k = int64_t(adv_dims.size());
  bool in_front = true;
  for (int64_t j = 0; j < k; ++j) in_front = in_front && adv_dims[size_t(j)] == j;
  if (!in_front) {
    Dims perm(adv_dims.begin(), adv_dims.end());
    for (int64_t d = 0, j = 0; d < yd; ++d) {
      if (j < k && adv_dims[size_t(j)] == d) { ++j; continue; }
      perm.push_back(d);
    }
    y = ops::transpose(y, perm);
  }
  Tensor idx;
  if (k == 1) {
    Dims s = index[0].shape();
    s.push_back(1);
    idx = ops::reshape(index[0], s);
  } else {
    std::vector<Tensor> cols;
    cols.reserve(size_t(k));
    for (const Tensor& t : index) cols.push_back(ops::expand(ops::cast(t, DType::Int64), b));
    idx = ops::stack(cols, -1);
  }
  Tensor out = renamed_index_errors([&] { return ops::gather_nd(y, idx); }, api, x_axis);

  // Adjacent advanced items: the broadcast dims go back where the first one was.
  const int64_t p = adv_dims[0], nbd = int64_t(b.size());
  if (last_item - first_item + 1 == n_adv_items && p > 0) {
    Dims perm;
    const int64_t rest = out.dim() - nbd;
    for (int64_t d = 0; d < p; ++d) perm.push_back(nbd + d);
    for (int64_t d = 0; d < nbd; ++d) perm.push_back(d);
    for (int64_t d = p; d < rest; ++d) perm.push_back(nbd + d);
    out = ops::transpose(out, perm);
  }
  return out;
}

Tensor getitem(const Tensor& x, PyObject* index) {
  Parsed p = parse(x, index, kGet);
  if (!p.advanced) return apply_basic(x, plan_basic(x, p.items, kGet));
  return advanced_get(x, p.items, kGet);
}

// ---- writing

bool broadcastable(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  for (size_t j = 0; j < from.size(); ++j) {
    int64_t f = from[from.size() - 1 - j], t = to[to.size() - 1 - j];
    if (f != t && f != 1) return false;
  }
  return true;
}

// The value as a tensor of x's dtype broadcast to `target` (leading size-1
// dims beyond it dropped, as NumPy does); a 0-D value stays 0-D with
// keep_scalar (for the ops that broadcast it themselves).
Tensor value_for(const Tensor& x, PyObject* value, const Dims& target, bool keep_scalar = false) {
  Tensor v;
  if (TensorImpl* t = as_tensor(value)) {
    v = Tensor(t);
  } else if (is_seq(value)) {
    v = list_tensor(value, false);
    OAR_CHECK(v.defined(), Type, "[", kSet, "] the value must be a tensor, a number or a rectangular (nested) list "
              "of numbers, got a ", type_name(value), " that is not one");
    v = placed(v);
  } else if (is_numpy(value)) {
    v = numpy_tensor(value, kSet);
    if (v.defined()) v = placed(v);
  }
  if (!v.defined()) {
    Scalar s;
    OAR_CHECK(nb::try_cast(nb::handle(value), s), Type, "[", kSet,
              "] the value must be a tensor, a number or a (nested) list of numbers, got ", type_name(value));
    v = ops::full(Dims{}, s, x.dtype());
  }
  Dims shape = v.shape();
  if (shape.size() > target.size()) {
    size_t extra = shape.size() - target.size();
    bool ones = true;
    for (size_t j = 0; j < extra; ++j) ones = ones && shape[j] == 1;
    if (ones) shape = Dims(shape.begin() + extra, shape.end());
  }
  OAR_CHECK(broadcastable(shape, target), Value, "[", kSet, "] the value of shape ", ops::shape_str(v.shape()),
            " cannot be broadcast to the indexed shape ", ops::shape_str(target));
  v = ops::cast(v, x.dtype());
  if (keep_scalar && v.dim() == 0) return v;
  if (shape.size() != v.shape().size()) v = ops::reshape(v, shape);
  return shape == target ? v : ops::expand(v, target);
}

void basic_set(Tensor& x, const Items& items, PyObject* value) {
  Basic b = plan_basic(x, items, kSet);
  Tensor v = value_for(x, value, basic_shape(x, b), true);
  if (v.dim() > 0) {
    if (!b.new_axes.empty()) v = ops::squeeze(v, b.new_axes);
    if (!b.int_axes.empty()) v = ops::unsqueeze(v, b.int_axes);  // the size-1 dims the ints removed
  }
  if (b.axes.empty()) ops::copy_(x, v);
  else ops::slice_scatter_(x, v, b.axes, b.starts, b.ends, b.steps);
}

// The linear positions in x of the elements x[index] reads (Note [tensor indexing]).
Tensor positions(const Tensor& x, const Items& items, const char* api) {
  Tensor grid = ops::reshape(ops::arange(Scalar(int64_t(0)), Scalar(x.numel()), Scalar(int64_t(1)), DType::Int64),
                             x.shape());
  bool advanced = false;
  for (const Item& it : items) advanced = advanced || it.kind == Item::Array;
  return advanced ? advanced_get(grid, items, api) : apply_basic(grid, plan_basic(grid, items, api));
}

void advanced_set(Tensor& x, const Items& items, PyObject* value) {
  OAR_CHECK(x.dim() > 0, Index, "[", kSet, "] a 0-D tensor cannot be indexed with tensors or lists");
  Tensor coords;
  if (leading_mask(x, items)) {
    NoGradGuard ng;
    coords = ops::nonzero(items[0].array);
  } else if (single_int_array(x, items)) {
    NoGradGuard ng;
    const Tensor& idx = as_index(items[0].array);
    Dims s = idx.shape();
    s.push_back(1);
    coords = ops::reshape(idx, s);
  } else {
    NoGradGuard ng;
    Tensor pos = positions(x, items, kSet);
    std::vector<Tensor> cols(size_t(x.dim()));
    int64_t stride = 1;
    for (int64_t d = x.dim() - 1; d >= 0; --d) {
      Tensor q = stride == 1 ? pos : ops::binary_scalar("floor_divide", pos, Scalar(stride), false);
      cols[size_t(d)] = d == 0 ? q : ops::binary_scalar("remainder", q, Scalar(x.shape()[size_t(d)]), false);
      stride *= x.shape()[size_t(d)];
    }
    coords = x.dim() == 1 ? ops::unsqueeze(pos, Dims{-1}) : ops::stack(cols, -1);
  }
  Dims target(coords.shape().begin(), coords.shape().end() - 1);
  for (int64_t d = coords.shape().back(); d < x.dim(); ++d) target.push_back(x.shape()[size_t(d)]);
  Tensor v = value_for(x, value, target);
  // Only a single int array can be out of bounds here (the other coordinates come from x's own grid).
  renamed_index_errors([&] { return ops::scatter_nd_(x, coords, v); }, kSet, Dims{0});
}

void setitem(const Tensor& self, PyObject* index, PyObject* value) {
  Tensor x = self;
  Parsed p = parse(x, index, kSet);
  if (!p.advanced) basic_set(x, p.items, value);
  else advanced_set(x, p.items, value);
}

void bind_getitem(nb::module_& m) {
  nb::object cls = m.attr("Tensor");
  nb::setattr(cls, "__getitem__", nb::cpp_function([](const Tensor& x, nb::handle index) {
    return getitem(x, index.ptr());
  }, nb::is_method(), nb::name("__getitem__"), nb::arg("index").none(),
     "x[index] with NumPy's rules: ints, slices (bounds may be one-element tensors), None, one Ellipsis, and int\n"
     "or bool tensors, lists or NumPy arrays. Basic indices give a view; reading is differentiable.\n\n"
     ">>> import oar\n>>> x = oar.to_tensor([[1, 2, 3], [4, 5, 6]])\n>>> x[1, ::-1].numpy().tolist()\n[6, 5, 4]\n"
     ">>> x[:, [2, 0]].numpy().tolist()\n[[3, 1], [6, 4]]\n>>> x[x > 2].numpy().tolist()\n[3, 4, 5, 6]\n"));
  nb::setattr(cls, "__setitem__", nb::cpp_function([](const Tensor& x, nb::handle index, nb::handle value) {
    setitem(x, index.ptr(), value.ptr());
  }, nb::is_method(), nb::name("__setitem__"), nb::arg("index").none(), nb::arg("value").none(),
     "x[index] = value, written into x's own storage; value (a tensor, number, list or NumPy array) is cast\n"
     "to x's dtype and broadcast to the indexed shape.\n\n"
     ">>> import oar\n>>> x = oar.zeros([2, 3])\n>>> x[0, 1:] = 5.0\n>>> x[x == 0] = oar.to_tensor([1.0, 2.0, 3.0, 4.0])\n"
     ">>> x.numpy().tolist()\n[[1.0, 5.0, 5.0], [2.0, 3.0, 4.0]]\n"));
  // For index_put: the int64 linear positions in x of x[index], shaped like x[index].
  m.def("_index_positions", [](const Tensor& x, nb::handle index, const std::string& api) {
    NoGradGuard ng;
    return positions(x, parse(x, index.ptr(), api.c_str()).items, api.c_str());
  }, nb::arg("x"), nb::arg("index").none(), nb::arg("api"));
}

Binder b(bind_getitem, 5);

}  // namespace
}  // namespace oar::bind
