// The SPMD rule engine and the rules (see Note [SPMD rule contract] in
// ops/spmd.h).
//
// Note [einsum sharding propagation]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Most rules are one einsum-like notation: each tensor dim gets a letter,
// and dims with one letter must be split the same way (matmul is
// "...mk,...kn->...mn"). The engine merges the inputs' dims_mappings letter by
// letter, in a fixed input order:
//   - the first input that splits a letter decides its mesh dim (a later,
//     different split of that letter is resharded away);
//   - a mesh dim splits at most one letter: the first one merged keeps it
//     (Paddle's rule too), the others become replicated;
//   - '1' marks a dim that is broadcast (size 1 against a larger size) and
//     is never split; letters in `replicated` (a softmax axis, normalized
//     dims, a concat axis) are never split either;
//   - letters in `even_only` are split only when the mesh dim divides them
//     (a mean over uneven pieces is not the mean of the pieces' means).
// An output gets the merged split of its letters; a split letter that is
// missing from an output (a contracted or reduced dim) makes that output
// partial on the letter's mesh dim, with the notation's reduce type.
// The reverse direction merges the wanted output splits the same way; letters
// that appear in no output are replicated.
#include "ops/spmd.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace oar {
namespace {

constexpr char kBcast = '1';

// Letter i of a notation: a..z then A..Z.
char letter(int i) {
  OAR_CHECK(i >= 0 && i < 52, NotImplemented, "[oar.distributed] SPMD rules support tensors of at most 52 dims");
  return i < 26 ? char('a' + i) : char('A' + i - 26);
}

struct Notation {
  SmallVector<std::string, 4> in;   // per input (ignored where the input is undefined)
  SmallVector<std::string, 2> out;  // per output
  SmallVector<Dims, 2> out_shapes;
  std::string replicated;
  std::string even_only;
  ReduceType reduce = ReduceType::Sum;
  SmallVector<int, 4> order;  // input merge order; empty: 0, 1, 2, ...
  char masked_row = 0;        // a table-row letter: split -> LocalRun::MaskedRowGather
  LocalRun local = LocalRun::Same;
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

void check_spec(const DistSpec& s, const ProcessMesh& mesh, size_t k, const char* what = "input") {
  if (!s.defined) return;
  OAR_CHECK(s.dims_mapping.size() == s.shape.size(), Value, "[oar.distributed] ", what, " ", k, ": dims_mapping has ",
            s.dims_mapping.size(), " entries for a ", s.shape.size(), "-D tensor");
  uint64_t used = 0;
  for (int64_t m : s.dims_mapping) {
    OAR_CHECK(m >= -1 && m < mesh.ndim(), Index, "[oar.distributed] ", what, " ", k, ": mesh dim ", m,
              " is out of range for a ", mesh.ndim(), "-D mesh");
    if (m < 0) continue;
    OAR_CHECK(!(used >> m & 1), Value, "[oar.distributed] ", what, " ", k, ": mesh dim ", m,
              " splits two tensor dims");
    used |= uint64_t(1) << m;
  }
  OAR_CHECK((s.partial_mask & used) == 0 && (mesh.ndim() >= 64 || (s.partial_mask >> mesh.ndim()) == 0), Value,
            "[oar.distributed] ", what, " ", k, ": partial mesh dims must be mesh dims that do not split the tensor");
}

struct LetterMap {
  int64_t mesh_dim[128];
  int64_t size[128];
  uint64_t used = 0;
  LetterMap() {
    std::fill(std::begin(mesh_dim), std::end(mesh_dim), -1);
    std::fill(std::begin(size), std::end(size), -1);
  }
  int64_t of(char c) const { return c == kBcast ? -1 : mesh_dim[uint8_t(c)]; }

  void record_sizes(const std::string& letters, const Dims& shape) {
    for (size_t j = 0; j < letters.size() && j < shape.size(); ++j)
      if (letters[j] != kBcast) size[uint8_t(letters[j])] = std::max(size[uint8_t(letters[j])], shape[j]);
  }
  void merge(const std::string& letters, const Dims& dm, const Notation& n, const ProcessMesh& mesh) {
    for (size_t j = 0; j < letters.size() && j < dm.size(); ++j) {
      char c = letters[j];
      int64_t m = dm[j];
      if (c == kBcast || m < 0 || has(n.replicated, c)) continue;
      if (mesh_dim[uint8_t(c)] != -1 || (used >> m & 1)) continue;
      if (has(n.even_only, c) && size[uint8_t(c)] % mesh.shape()[m] != 0) continue;
      mesh_dim[uint8_t(c)] = m;
      used |= uint64_t(1) << m;
    }
  }
  Dims mapping(const std::string& letters) const {
    Dims dm(letters.size(), -1);
    for (size_t j = 0; j < letters.size(); ++j) dm[j] = of(letters[j]);
    return dm;
  }
};

SmallVector<int, 4> merge_order(const Notation& n, size_t count) {
  if (!n.order.empty()) return n.order;
  SmallVector<int, 4> o;
  for (size_t i = 0; i < count; ++i) o.push_back(int(i));
  return o;
}

// Required inputs, outputs and cost from a merged letter map.
SpmdInfo finish(const ProcessMesh& mesh, std::span<const DistSpec> in, const Notation& n, const LetterMap& lm) {
  SpmdInfo r;
  std::string all_in;
  for (size_t i = 0; i < in.size(); ++i) {
    DistSpec s = in[i];
    if (s.defined) {
      s.dims_mapping = lm.mapping(n.in[i]);
      s.partial_mask = 0;
      s.partial_type = ReduceType::Sum;
      all_in += n.in[i];
      r.comm_bytes += reshard_cost(in[i], s, mesh);
    }
    r.inputs.push_back(std::move(s));
  }
  int64_t itemsize = in.empty() ? 4 : in[0].itemsize;
  for (size_t k = 0; k < n.out.size(); ++k) {
    DistSpec o = DistSpec::sharded(n.out_shapes[k], lm.mapping(n.out[k]), itemsize);
    for (char c : all_in) {
      int64_t m = lm.of(c);
      if (m >= 0 && !has(n.out[k], c)) o.partial_mask |= uint64_t(1) << m;
    }
    if (o.partial_mask) o.partial_type = n.reduce;
    r.outputs.push_back(std::move(o));
  }
  r.local = n.local;
  if (n.masked_row && lm.of(n.masked_row) >= 0) r.local = LocalRun::MaskedRowGather;
  return r;
}

// A notation covers exactly the inputs it was built for.
void check_arity(std::span<const DistSpec> in, const Notation& n) {
  OAR_CHECK(in.size() == n.in.size(), Value, "[oar.distributed] the SPMD rule expects ", n.in.size(),
            " input specs, got ", in.size());
}

SpmdInfo einsum_forward(const ProcessMesh& mesh, std::span<const DistSpec> in, const Notation& n) {
  check_arity(in, n);
  LetterMap lm;
  for (size_t i = 0; i < in.size(); ++i) {
    check_spec(in[i], mesh, i);
    if (in[i].defined) lm.record_sizes(n.in[i], in[i].shape);
  }
  for (int i : merge_order(n, in.size()))
    if (in[i].defined) lm.merge(n.in[i], in[i].dims_mapping, n, mesh);
  return finish(mesh, in, n, lm);
}

SpmdInfo einsum_reverse(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out,
                        const Notation& n) {
  OAR_CHECK(out.size() == n.out.size(), Value, "[oar.distributed] the op has ", n.out.size(), " outputs, ",
            out.size(), " output specs were given");
  check_arity(in, n);
  LetterMap lm;
  for (size_t i = 0; i < in.size(); ++i) {
    check_spec(in[i], mesh, i);
    if (in[i].defined) lm.record_sizes(n.in[i], in[i].shape);
  }
  for (size_t k = 0; k < out.size(); ++k) check_spec(out[k], mesh, k, "output");
  for (size_t k = 0; k < out.size(); ++k) lm.merge(n.out[k], out[k].dims_mapping, n, mesh);
  return finish(mesh, in, n, lm);
}

using NotationFn = Notation (*)(std::span<const DistSpec> in, const Attrs& a);

template <NotationFn F> SpmdInfo fwd(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& a) {
  return einsum_forward(mesh, in, F(in, a));
}
template <NotationFn F>
SpmdInfo rev(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out, const Attrs& a) {
  return einsum_reverse(mesh, in, out, F(in, a));
}

std::string letters(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += letter(i);
  return s;
}

void need_inputs(std::span<const DistSpec> in, size_t n, const char* op) {
  OAR_CHECK(in.size() >= n, Value, "[oar.", op, "] SPMD rule: expected ", n, " inputs, got ", in.size());
}

// ---------------------------------------------------------------- notations

// Broadcasting elementwise ops (any number of inputs, one output).
Notation elementwise_notation(std::span<const DistSpec> in, const Attrs&) {
  // The right-aligned broadcast of every defined input's shape.
  size_t r = 0;
  for (const DistSpec& s : in)
    if (s.defined) r = std::max(r, s.shape.size());
  Dims out(r, 1);
  for (const DistSpec& s : in) {
    if (!s.defined) continue;
    size_t lead = r - s.shape.size();
    for (size_t j = 0; j < s.shape.size(); ++j)
      if (s.shape[j] != 1) out[lead + j] = s.shape[j];
  }
  Notation n;
  std::string ol = letters(0, int(r));
  for (const DistSpec& s : in) {
    std::string l;
    if (s.defined) {
      size_t lead = r - s.shape.size();
      for (size_t j = 0; j < s.shape.size(); ++j) l += (s.shape[j] == 1 && out[lead + j] != 1) ? kBcast : ol[lead + j];
    }
    n.in.push_back(l);
  }
  n.out.push_back(ol);
  n.out_shapes.push_back(out);
  return n;
}

// The batch part of matmul-like operands: letters 0..nb-1 right-aligned, '1'
// where the operand's dim is broadcast.
std::string batch_letters(const Dims& shape, size_t nbatch, const Dims& out_batch) {
  std::string l;
  size_t lead = out_batch.size() - nbatch;
  for (size_t j = 0; j < nbatch; ++j) l += (shape[j] == 1 && out_batch[lead + j] != 1) ? kBcast : letter(int(lead + j));
  return l;
}

Dims broadcast_batch(const Dims& a, size_t na, const Dims& b, size_t nb) {
  size_t r = std::max(na, nb);
  Dims out(r, 1);
  for (size_t j = 0; j < na; ++j) if (a[j] != 1) out[r - na + j] = a[j];
  for (size_t j = 0; j < nb; ++j) if (b[j] != 1) out[r - nb + j] = b[j];
  return out;
}

// matmul(x, y; transpose_x, transpose_y): "...mk,...kn->...mn" with the
// operands' last two dims swapped when transposed.
Notation matmul_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 2, "matmul");
  const Dims &xs = in[0].shape, &ys = in[1].shape;
  OAR_CHECK(xs.size() >= 2 && ys.size() >= 2, Value, "[oar.matmul] SPMD rule: operands must be at least 2-D");
  bool tx = a.size() > 0 && a.b(0), ty = a.size() > 1 && a.b(1);
  size_t bx = xs.size() - 2, by = ys.size() - 2;
  Dims ob = broadcast_batch(xs, bx, ys, by);
  int nb = int(ob.size());
  char m = letter(nb), k = letter(nb + 1), nn = letter(nb + 2);
  Notation n;
  std::string xl = batch_letters(xs, bx, ob), yl = batch_letters(ys, by, ob);
  xl += tx ? std::string{k, m} : std::string{m, k};
  yl += ty ? std::string{nn, k} : std::string{k, nn};
  n.in = {xl, yl};
  n.out.push_back(letters(0, nb) + m + nn);
  Dims os = ob;
  os.push_back(xs[xs.size() - (tx ? 1 : 2)]);
  os.push_back(ys[ys.size() - (ty ? 2 : 1)]);
  n.out_shapes.push_back(os);
  return n;
}

// linear(x [..., K], w [K, N], b [N]): the bias is added once per piece, so
// K is never split (a Partial output would count the bias n times).
Notation linear_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 3, "nn.functional.linear");
  const Dims& xs = in[0].shape;
  OAR_CHECK(xs.size() >= 1 && in[1].shape.size() == 2, Value,
            "[oar.nn.functional.linear] SPMD rule: x must be at least 1-D and weight 2-D");
  int r = int(xs.size());
  char k = letter(r - 1), nn = letter(r);
  Notation n;
  n.in = {letters(0, r - 1) + k, std::string{k, nn}, std::string{nn}};
  n.out.push_back(letters(0, r - 1) + nn);
  Dims os = xs;
  os.back() = in[1].shape[1];
  n.out_shapes.push_back(os);
  n.replicated = std::string{k};
  return n;
}

// sum/mean/prod/amax/amin(x; axes (normalised, sorted), keepdim, dtype).
template <ReduceType R> Notation reduce_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "sum");
  const Dims& xs = in[0].shape;
  const Dims& axes = a.ints(0);
  bool keep = a.b(1);
  Notation n;
  n.in.push_back(letters(0, int(xs.size())));
  std::string ol;
  Dims os;
  for (size_t d = 0; d < xs.size(); ++d) {
    bool red = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    if (!red) {
      ol += letter(int(d));
      os.push_back(xs[d]);
    } else {
      if (R == ReduceType::Avg) n.even_only += letter(int(d));
      if (keep) {
        ol += kBcast;
        os.push_back(1);
      }
    }
  }
  n.out.push_back(ol);
  n.out_shapes.push_back(os);
  n.reduce = R;
  return n;
}

// softmax / log_softmax(x; axis): the axis is replicated.
Notation softmax_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "nn.functional.softmax");
  int r = int(in[0].shape.size());
  Notation n;
  std::string l = letters(0, r);
  n.in.push_back(l);
  if (r > 0) n.replicated = std::string{l[size_t(std::clamp<int64_t>(a.i(0), 0, r - 1))]};
  n.out.push_back(l);
  n.out_shapes.push_back(in[0].shape);
  return n;
}

// softmax_grad(y, g; axis): like softmax, both inputs split alike.
Notation softmax_grad_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 2, "nn.functional.softmax");
  Notation n = softmax_notation(in.subspan(0, 1), a);
  n.in.push_back(n.in[0]);
  return n;
}

// layer_norm(x, weight, bias; begin_axis, eps): dims from begin_axis on are
// normalized together and stay replicated; weight and bias are replicated.
Notation layer_norm_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 3, "nn.functional.layer_norm");
  int r = int(in[0].shape.size());
  int begin = int(std::clamp<int64_t>(a.i(0), 0, r));
  Notation n;
  std::string l = letters(0, r), norm = letters(begin, r);
  n.in = {l, in[1].defined ? norm.substr(norm.size() - std::min(norm.size(), in[1].shape.size())) : "",
          in[2].defined ? norm.substr(norm.size() - std::min(norm.size(), in[2].shape.size())) : ""};
  n.replicated = norm;
  n.out.push_back(l);
  n.out_shapes.push_back(in[0].shape);
  return n;
}

// rms_norm(x, weight?; begin_axis, eps): as layer_norm without a bias.
Notation rms_norm_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 2, "nn.functional.rms_norm");
  int r = int(in[0].shape.size());
  int begin = int(std::clamp<int64_t>(a.i(0), 0, r));
  Notation n;
  std::string l = letters(0, r), norm = letters(begin, r);
  n.in = {l, in[1].defined ? norm.substr(norm.size() - std::min(norm.size(), in[1].shape.size())) : ""};
  n.replicated = norm;
  n.out.push_back(l);
  n.out_shapes.push_back(in[0].shape);
  return n;
}

// softmax_cross_entropy(logits [..., C], label [..., 1]) -> (loss, lse), both
// [..., 1]: the class axis is replicated (the class-parallel variant, which
// splits C and all-reduces the row max and sum inside, is not an op here).
Notation sce_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 2, "nn.functional.cross_entropy");
  int r = int(in[0].shape.size());
  OAR_CHECK(r >= 1, Value, "[oar.nn.functional.cross_entropy] SPMD rule: logits must have a class axis");
  Notation n;
  std::string rows = letters(0, r - 1) + kBcast;
  n.in = {letters(0, r), rows};
  n.replicated = std::string{letter(r - 1)};
  Dims os = in[0].shape;
  os.back() = 1;
  n.out = {rows, rows};
  n.out_shapes = {os, os};
  return n;
}

// softmax_cross_entropy_grad(logits [..., C], label, lse, grad [..., 1]) ->
// dlogits [..., C]: rows as in the forward, the class axis replicated.
Notation sce_grad_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 4, "nn.functional.cross_entropy");
  int r = int(in[0].shape.size());
  Notation n;
  std::string rows = letters(0, r - 1) + kBcast;
  n.in = {letters(0, r), rows, rows, rows};
  n.replicated = std::string{letter(r - 1)};
  n.out = {letters(0, r)};
  n.out_shapes = {in[0].shape};
  return n;
}

// full_like(x; value, dtype): laid out like x (its values are not read).
Notation full_like_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 1, "full_like");
  Notation n;
  n.in = {letters(0, int(in[0].shape.size()))};
  n.out = {n.in[0]};
  n.out_shapes = {in[0].shape};
  return n;
}

// expand(x; shape): x's dims align with the output's last dims; a dim of
// size 1 that grows is broadcast (never split).
Notation expand_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "expand");
  const Dims& target = a.ints(0);
  int ro = int(target.size()), ri = int(in[0].shape.size());
  OAR_CHECK(ro >= ri, Value, "[oar.expand] SPMD rule: the target shape has fewer dims than the input");
  Notation n;
  std::string il;
  Dims os(target.begin(), target.end());
  for (int i = 0; i < ri; ++i) {
    int j = i + ro - ri;
    if (os[size_t(j)] < 0) os[size_t(j)] = in[0].shape[size_t(i)];
    il += in[0].shape[size_t(i)] == 1 && os[size_t(j)] != 1 ? kBcast : letter(j);
  }
  n.in = {il};
  n.out = {letters(0, ro)};
  n.out_shapes = {os};
  n.local = LocalRun::LocalShapeAttr;  // attr 0 is the (global) output shape
  return n;
}

// transpose(x; perm)
Notation transpose_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "transpose");
  int r = int(in[0].shape.size());
  const Dims& perm = a.ints(0);
  OAR_CHECK(int(perm.size()) == r, Value, "[oar.transpose] SPMD rule: perm needs ", r, " entries");
  Notation n;
  n.in.push_back(letters(0, r));
  std::string ol;
  Dims os;
  for (int64_t p : perm) {
    int64_t q = p < 0 ? p + r : p;
    OAR_CHECK(q >= 0 && q < r, Index, "[oar.transpose] SPMD rule: perm entry ", p, " is out of range");
    ol += letter(int(q));
    os.push_back(in[0].shape[q]);
  }
  n.out.push_back(ol);
  n.out_shapes.push_back(os);
  return n;
}

// concat(xs...; axis): the axis is replicated, the other dims split alike.
Notation concat_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "concat");
  int r = int(in[0].shape.size());
  int64_t axis = a.i(0);
  OAR_CHECK(axis >= 0 && axis < r, Index, "[oar.concat] SPMD rule: axis ", axis, " is out of range");
  Notation n;
  std::string l = letters(0, r);
  Dims os = in[0].shape;
  os[axis] = 0;
  for (const DistSpec& s : in) {
    n.in.push_back(l);
    if (s.defined && int(s.shape.size()) == r) os[axis] += s.shape[axis];
  }
  n.replicated = std::string{l[axis]};
  n.out.push_back(l);
  n.out_shapes.push_back(os);
  return n;
}

// split(x; axis, sections): the axis is replicated; one output per section.
Notation split_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "split");
  int r = int(in[0].shape.size());
  int64_t axis = a.i(0);
  OAR_CHECK(axis >= 0 && axis < r, Index, "[oar.split] SPMD rule: axis ", axis, " is out of range");
  Notation n;
  std::string l = letters(0, r);
  n.in.push_back(l);
  n.replicated = std::string{l[axis]};
  for (int64_t sec : a.ints(1)) {
    Dims os = in[0].shape;
    os[axis] = sec;
    n.out.push_back(l);
    n.out_shapes.push_back(os);
  }
  return n;
}

// gather_nd(x, index [..., k]) -> [...] + x.shape[k:]: the index batch dims
// carry over, the coordinate dim is replicated. An embedding is
// gather_nd(weight [V, H], ids[..., None]): ids split -> output split alike;
// weight split along H -> output's last dim split; weight split along V (k == 1)
// -> output Partial(sum), run as a masked lookup (LocalRun::MaskedRowGather).
// The ids merge first, so data parallelism wins a mesh dim over the table.
Notation gather_nd_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 2, "gather_nd");
  const Dims &xs = in[0].shape, &is = in[1].shape;
  OAR_CHECK(is.size() >= 1 && size_t(is.back()) <= xs.size(), Value,
            "[oar.gather_nd] SPMD rule: index.shape[-1] must be at most x's rank");
  int q = int(is.size()), k = int(is.back()), rx = int(xs.size());
  // letters: index batch 0..q-2, coordinate q-1, x's indexed dims q..q+k-1, x's rest after.
  Notation n;
  std::string batch = letters(0, q - 1), rows = letters(q, q + k), rest = letters(q + k, q + rx);
  n.in = {rows + rest, batch + letter(q - 1)};
  n.replicated = std::string{letter(q - 1)};
  if (k == 1) n.masked_row = rows[0];
  else n.replicated += rows;
  n.out.push_back(batch + rest);
  Dims os(is.begin(), is.end() - 1);
  for (int d = k; d < rx; ++d) os.push_back(xs[d]);
  n.out_shapes.push_back(os);
  n.order = {1, 0};
  return n;
}

// layer_norm_grad(x, weight, grad) -> (dx, dweight, dbias): the forward's
// layout for x and grad; dweight and dbias sum over the leading dims, so a
// split leading dim leaves them Partial(sum).
Notation layer_norm_grad_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 3, "nn.functional.layer_norm");
  int r = int(in[0].shape.size());
  int begin = int(std::clamp<int64_t>(a.i(0), 0, r));
  Notation n;
  std::string l = letters(0, r), norm = letters(begin, r);
  std::string wl = in[1].defined ? norm.substr(norm.size() - std::min(norm.size(), in[1].shape.size())) : "";
  n.in = {l, wl, in[2].defined ? l : ""};
  n.replicated = norm;
  Dims ws = in[1].defined ? in[1].shape : Dims{};
  n.out = {l, wl, wl};
  n.out_shapes = {in[0].shape, ws, ws};
  return n;
}

// rms_norm_grad(x, weight?, grad; begin_axis, eps, weight_grad) -> (dx,
// dweight): as layer_norm_grad; dweight is [0] unless weight_grad.
Notation rms_norm_grad_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 3, "nn.functional.rms_norm");
  int r = int(in[0].shape.size());
  int begin = int(std::clamp<int64_t>(a.i(0), 0, r));
  Notation n;
  std::string l = letters(0, r), norm = letters(begin, r);
  std::string wl = in[1].defined ? norm.substr(norm.size() - std::min(norm.size(), in[1].shape.size())) : "";
  const bool wg = a.size() > 2 && a.b(2) && in[1].defined;
  n.in = {l, wl, in[2].defined ? l : ""};
  n.replicated = norm;
  n.out = {l, wg ? wl : letters(r, r + 1)};  // [0]: a letter of no input, replicated
  n.out_shapes = {in[0].shape, wg ? in[1].shape : Dims{0}};
  return n;
}

// fused_attention(q [..., Lq, D], k [..., Lk, D], v [..., Lk, Dv], mask; scale,
// causal) -> [..., Lq, Dv]: the leading (batch, head) dims split alike; the
// sequence and feature dims are replicated (a split Lq would shift the
// causal mask's diagonal on each piece). The mask broadcasts to the scores
// [..., Lq, Lk] and follows their leading splits.
Notation fused_attention_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 3, "nn.functional.scaled_dot_product_attention");
  int r = int(in[0].shape.size());
  OAR_CHECK(r >= 2 && in[1].shape.size() == size_t(r) && in[2].shape.size() == size_t(r), Value,
            "[oar.nn.functional.scaled_dot_product_attention] SPMD rule: q, k and v must have the same rank (at "
            "least 2)");
  std::string lead = letters(0, r - 2);
  char m = letter(r - 2), d = letter(r - 1), kn = letter(r), e = letter(r + 1);
  Notation n;
  n.in = {lead + m + d, lead + kn + d, lead + kn + e, ""};
  if (in.size() > 3 && in[3].defined) {
    const Dims& ms = in[3].shape;
    std::string scores = lead + m + kn, ml;
    Dims full(in[0].shape.begin(), in[0].shape.end() - 1);
    full.push_back(in[1].shape[size_t(r - 2)]);
    size_t lead_pad = scores.size() - std::min(scores.size(), ms.size());
    for (size_t j = 0; j < ms.size() && lead_pad + j < scores.size(); ++j)
      ml += ms[j] == 1 && full[lead_pad + j] != 1 ? kBcast : scores[lead_pad + j];
    n.in[3] = ml;
  }
  n.in.resize(in.size());
  n.replicated = std::string{m, d, kn, e};
  n.out = {lead + m + e};
  Dims os(in[0].shape.begin(), in[0].shape.end() - 1);
  os.push_back(in[2].shape.back());
  n.out_shapes = {os};
  return n;
}

// fused_attention_grad(q, k, v, mask, dout) -> (dq, dk, dv): the forward's
// layouts; dout is laid out as the forward's result, each gradient as its input.
Notation fused_attention_grad_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 5, "nn.functional.scaled_dot_product_attention");
  Notation n = fused_attention_notation(in.first(4), a);
  n.in.push_back(n.out[0]);
  n.out = {n.in[0], n.in[1], n.in[2]};
  n.out_shapes = {in[0].shape, in[1].shape, in[2].shape};
  return n;
}

// The axes a strided_slice / slice_scatter attr list touches (normalised).
std::string sliced_letters(const Dims& axes, int r) {
  std::string s;
  for (int64_t ax : axes) {
    int64_t q = ax < 0 ? ax + r : ax;
    if (q >= 0 && q < r) s += letter(int(q));
  }
  return s;
}

// Python slice length of [start, end) by step on a dim of n (Note [slice bounds]).
int64_t slice_len(int64_t start, int64_t end, int64_t step, int64_t n) {
  if (step == 0 || step == std::numeric_limits<int64_t>::min()) return 0;  // the op rejects it
  auto bound = [&](int64_t v) {
    if (v < 0) v += n;
    return step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
  };
  int64_t st = bound(start), en = bound(end);
  return step > 0 ? (en > st ? 1 + (en - st - 1) / step : 0) : (st > en ? 1 + (st - en - 1) / -step : 0);
}

// strided_slice(x; axes, starts, ends, strides): the sliced axes are
// replicated (the bounds are global), the others keep their split.
Notation strided_slice_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "strided_slice");
  int r = int(in[0].shape.size());
  const Dims &axes = a.ints(0), &starts = a.ints(1), &ends = a.ints(2), &steps = a.ints(3);
  Notation n;
  std::string l = letters(0, r);
  n.in = {l};
  n.replicated = sliced_letters(axes, r);
  Dims os = in[0].shape;
  for (size_t i = 0; i < axes.size() && i < starts.size() && i < ends.size() && i < steps.size(); ++i) {
    int64_t q = axes[i] < 0 ? axes[i] + r : axes[i];
    if (q >= 0 && q < r) os[size_t(q)] = slice_len(starts[i], ends[i], steps[i], in[0].shape[size_t(q)]);
  }
  n.out = {l};
  n.out_shapes = {os};
  return n;
}

// slice_scatter(x, value; axes, starts, ends, strides) -> x with the slice
// replaced by value (broadcast to the slice's shape, right-aligned): the
// sliced axes are replicated, the others split alike in x and value.
Notation slice_scatter_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 2, "slice_scatter");
  Notation n = strided_slice_notation(in.subspan(0, 1), a);
  const Dims& slice = n.out_shapes[0];
  const Dims& vs = in[1].shape;
  std::string l = n.in[0], vl;
  size_t lead = l.size() - std::min(l.size(), vs.size());
  for (size_t j = 0; j < vs.size() && lead + j < l.size(); ++j)
    vl += vs[j] == 1 && slice[lead + j] != 1 ? kBcast : l[lead + j];
  n.in.push_back(vl);
  n.out_shapes = {in[0].shape};
  return n;
}

// squeeze(x; axis): the dropped size-1 dims are replicated (a split one would
// leave empty pieces that do not drop), the others keep their split. With no
// axes every size-1 dim drops, and a split dim whose piece has one element
// would drop too, so everything is replicated then.
Notation squeeze_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "squeeze");
  int r = int(in[0].shape.size());
  const Dims& axes = a.ints(0);
  Notation n;
  std::string l = letters(0, r), ol;
  Dims os;
  for (int d = 0; d < r; ++d) {
    bool listed = std::any_of(axes.begin(), axes.end(), [&](int64_t ax) { return (ax < 0 ? ax + r : ax) == d; });
    if (in[0].shape[size_t(d)] == 1 && (axes.empty() || listed)) {
      n.replicated += l[size_t(d)];
    } else {
      ol += l[size_t(d)];
      os.push_back(in[0].shape[size_t(d)]);
    }
  }
  if (axes.empty()) n.replicated = l;
  n.in = {l};
  n.out = {ol};
  n.out_shapes = {os};
  return n;
}

// scatter_nd(x, index [..., k], updates; overwrite) -> x with updates written
// (or added) at the index rows: the trailing (non-indexed) dims split alike
// in x, updates and the output. The index batch stays replicated: a split
// one would need x counted once across the pieces, which no placement of
// the output says.
Notation scatter_nd_notation(std::span<const DistSpec> in, const Attrs&) {
  need_inputs(in, 3, "scatter_nd");
  const Dims &xs = in[0].shape, &is = in[1].shape;
  OAR_CHECK(is.size() >= 1 && size_t(is.back()) <= xs.size(), Value,
            "[oar.scatter_nd] SPMD rule: index.shape[-1] must be at most x's rank");
  int q = int(is.size()), k = int(is.back()), rx = int(xs.size());
  Notation n;
  std::string batch = letters(0, q - 1), rows = letters(q, q + k), rest = letters(q + k, q + rx);
  n.in = {rows + rest, batch + letter(q - 1), batch + rest};
  n.replicated = batch + letter(q - 1) + rows;
  n.out = {rows + rest};
  n.out_shapes = {xs};
  return n;
}

// ---------------------------------------------------------------- reshape

// Note [reshape sharding]: the two shapes are cut into groups of dims whose
// products match (a merge [4, 6] -> [24], a split [24] -> [4, 6], or both).
// Within a group only the leading dim (of size > 1) may stay split: its
// pieces are contiguous blocks of the flattened group, which is the leading
// dim of the other side's pieces when the mesh dim divides both leading dims
// (or when the group maps one dim to one dim). Other dims are replicated.
// Returns the kept mapping of `from` and the resulting mapping of `to`.
std::pair<Dims, Dims> reshape_map(const Dims& from, const Dims& from_dm, const Dims& to, const ProcessMesh& mesh) {
  Dims keep(from.size(), -1), out(to.size(), -1);
  int64_t nf = 1, nt = 1;
  for (int64_t d : from) nf *= d;
  for (int64_t d : to) nt *= d;
  if (nf != nt || nf == 0) return {keep, out};  // zero-size or mismatched (the op rejects the latter)
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    size_t i0 = i, j0 = j;
    int64_t pi = 1, pj = 1;
    if (i < from.size()) pi *= from[i++];
    if (j < to.size()) pj *= to[j++];
    while (pi != pj) {
      if (pi < pj && i < from.size()) pi *= from[i++];
      else if (pj < pi && j < to.size()) pj *= to[j++];
      else break;
    }
    if (pi != pj) break;
    // the group: from[i0, i) and to[j0, j). One dim to one dim keeps its split
    // whatever the sizes (a split size-1 dim included, as Paddle does).
    if (i - i0 == 1 && j - j0 == 1) {
      keep[i0] = out[j0] = from_dm[i0];
      continue;
    }
    size_t a = i0, b = j0;
    while (a < i && from[a] == 1) ++a;
    while (b < j && to[b] == 1) ++b;
    if (a == i || b == j) continue;
    int64_t m = from_dm[a];
    if (m < 0) continue;
    size_t non1_from = 0, non1_to = 0;
    for (size_t t = i0; t < i; ++t) non1_from += from[t] != 1;
    for (size_t t = j0; t < j; ++t) non1_to += to[t] != 1;
    int64_t ms = mesh.shape()[m];
    bool one_to_one = non1_from == 1 && non1_to == 1;  // up to size-1 dims
    if (one_to_one || (from[a] % ms == 0 && to[b] % ms == 0)) {
      keep[a] = m;
      out[b] = m;
    }
  }
  return {keep, out};
}

// The resolved target shape of reshape(x; shape) (-1 inferred, -2 copies).
Dims reshape_target(const Dims& in, const Dims& req) {
  Dims out(req.size());
  int64_t known = 1, infer = -1, numel = 1;
  for (int64_t d : in) numel *= d;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i] == -2 && i < in.size() ? in[i] : req[i];
    if (d == -1) {
      OAR_CHECK(infer < 0, Value, "[oar.reshape] SPMD rule: only one dim of the target shape may be -1");
      infer = int64_t(i);
      out[i] = 1;
      continue;
    }
    OAR_CHECK(d >= 0, Value, "[oar.reshape] SPMD rule: bad target shape entry ", req[i]);
    out[i] = d;
    known *= d;
  }
  if (infer >= 0) out[infer] = known == 0 ? 0 : numel / known;
  return out;
}

SpmdInfo reshape_info(const ProcessMesh& mesh, const DistSpec& x, const Dims& in_dm, const Dims& target,
                      const Dims& out_dm, LocalRun local) {
  SpmdInfo r;
  DistSpec req = DistSpec::sharded(x.shape, in_dm, x.itemsize);
  r.comm_bytes = reshard_cost(x, req, mesh);
  r.inputs.push_back(req);
  r.outputs.push_back(DistSpec::sharded(target, out_dm, x.itemsize));
  r.local = local;
  return r;
}

SpmdInfo reshape_to(const ProcessMesh& mesh, std::span<const DistSpec> in, const Dims& target, LocalRun local) {
  check_spec(in[0], mesh, 0);
  auto [keep, out] = reshape_map(in[0].shape, in[0].dims_mapping, target, mesh);
  return reshape_info(mesh, in[0], keep, target, out, local);
}

SpmdInfo reshape_from(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out,
                      const Dims& target, LocalRun local) {
  check_spec(in[0], mesh, 0);
  OAR_CHECK(out.size() == 1, Value, "[oar.reshape] SPMD rule: one output spec expected");
  check_spec(out[0], mesh, 0, "output");
  OAR_CHECK(out[0].shape == target, Value, "[oar.reshape] SPMD rule: the output spec's shape must be the target shape");
  // Reverse: map the wanted output split back onto the input's dims.
  auto [out_keep, in_dm] = reshape_map(target, out[0].dims_mapping, in[0].shape, mesh);
  return reshape_info(mesh, in[0], in_dm, target, out_keep, local);
}

SpmdInfo reshape_fwd(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "reshape");
  return reshape_to(mesh, in, reshape_target(in[0].shape, a.ints(0)), LocalRun::LocalShapeAttr);
}
SpmdInfo reshape_rev(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out,
                     const Attrs& a) {
  need_inputs(in, 1, "reshape");
  return reshape_from(mesh, in, out, reshape_target(in[0].shape, a.ints(0)), LocalRun::LocalShapeAttr);
}

// unsqueeze(x; axes = sorted positions in the output): a reshape whose attrs
// hold positions, not sizes, so the local call needs no change.
Dims unsqueeze_target(const Dims& in, const Dims& axes) {
  Dims out;
  size_t k = 0, src = 0;
  for (size_t d = 0; d < in.size() + axes.size(); ++d) {
    if (k < axes.size() && axes[k] == int64_t(d)) { ++k; out.push_back(1); }
    else if (src < in.size()) out.push_back(in[src++]);
  }
  return out;
}
SpmdInfo unsqueeze_fwd(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "unsqueeze");
  return reshape_to(mesh, in, unsqueeze_target(in[0].shape, a.ints(0)), LocalRun::Same);
}
SpmdInfo unsqueeze_rev(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out,
                       const Attrs& a) {
  need_inputs(in, 1, "unsqueeze");
  return reshape_from(mesh, in, out, unsqueeze_target(in[0].shape, a.ints(0)), LocalRun::Same);
}

// fft_c2c / fft_r2c / fft_c2r(x; axes, normalization, forward, [onesided |
// last_dim_size]): every transformed axis mixes all of its elements, so it
// is replicated; the others may stay split. r2c's onesided output keeps
// n/2 + 1 bins of the last transformed axis, c2r's has last_dim_size.
Notation fft_notation(std::span<const DistSpec> in, const Attrs& a) {
  need_inputs(in, 1, "fft");
  const Dims& xs = in[0].shape;
  int r = int(xs.size());
  Notation n;
  std::string l = letters(0, r);
  n.in.push_back(l);
  Dims os = xs;
  const Dims& axes = a.ints(0);
  for (int64_t ax : axes)
    if (ax >= 0 && ax < r) n.replicated += l[size_t(ax)];
  if (!axes.empty() && axes.back() >= 0 && axes.back() < r && a.size() > 3) {
    int64_t last = axes.back();
    if (std::holds_alternative<bool>(a[3]) && a.b(3)) os[size_t(last)] = xs[size_t(last)] / 2 + 1;
    if (std::holds_alternative<int64_t>(a[3])) os[size_t(last)] = a.i(3);
  }
  n.out.push_back(l);
  n.out_shapes.push_back(os);
  return n;
}

// ---------------------------------------------------------------- named rules

// Each op names its rule where it is defined (OpBuilder::spmd); the names
// resolve here.
struct NamedRule {
  std::string_view name;
  SpmdRule rule;
};
template <NotationFn F> constexpr SpmdRule einsum_rule() { return {fwd<F>, rev<F>}; }
constexpr NamedRule kRules[] = {
    {"matmul", einsum_rule<matmul_notation>()},
    {"linear", einsum_rule<linear_notation>()},
    {"reduce_sum", einsum_rule<reduce_notation<ReduceType::Sum>>()},
    {"reduce_mean", einsum_rule<reduce_notation<ReduceType::Avg>>()},
    {"reduce_prod", einsum_rule<reduce_notation<ReduceType::Prod>>()},
    {"reduce_max", einsum_rule<reduce_notation<ReduceType::Max>>()},
    {"reduce_min", einsum_rule<reduce_notation<ReduceType::Min>>()},
    {"softmax", einsum_rule<softmax_notation>()},
    {"softmax_grad", einsum_rule<softmax_grad_notation>()},
    {"layer_norm", einsum_rule<layer_norm_notation>()},
    {"layer_norm_grad", einsum_rule<layer_norm_grad_notation>()},
    {"rms_norm", einsum_rule<rms_norm_notation>()},
    {"rms_norm_grad", einsum_rule<rms_norm_grad_notation>()},
    {"softmax_cross_entropy", einsum_rule<sce_notation>()},
    {"softmax_cross_entropy_grad", einsum_rule<sce_grad_notation>()},
    {"full_like", einsum_rule<full_like_notation>()},
    {"expand", einsum_rule<expand_notation>()},
    {"transpose", einsum_rule<transpose_notation>()},
    {"concat", einsum_rule<concat_notation>()},
    {"split", einsum_rule<split_notation>()},
    {"gather_nd", einsum_rule<gather_nd_notation>()},
    {"scatter_nd", einsum_rule<scatter_nd_notation>()},
    {"fused_attention", einsum_rule<fused_attention_notation>()},
    {"fused_attention_grad", einsum_rule<fused_attention_grad_notation>()},
    {"strided_slice", einsum_rule<strided_slice_notation>()},
    {"slice_scatter", einsum_rule<slice_scatter_notation>()},
    {"squeeze", einsum_rule<squeeze_notation>()},
    {"reshape", {reshape_fwd, reshape_rev}},
    {"unsqueeze", {unsqueeze_fwd, unsqueeze_rev}},
    {"fft", einsum_rule<fft_notation>()},
    // A random elementwise op: see the random-op paragraph of the Note.
    {"elementwise", einsum_rule<elementwise_notation>()},
};

int64_t piece_numel(const Dims& shape, const Placements& p, const ProcessMesh& mesh) {
  Dims s = shape;
  for (size_t m = 0; m < p.size(); ++m)
    if (p[m].is_shard() && p[m].dim >= 0 && p[m].dim < int64_t(s.size()))
      s[p[m].dim] = (s[p[m].dim] + mesh.shape()[m] - 1) / mesh.shape()[m];  // the largest piece
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace

// ---------------------------------------------------------------- public

const SpmdRule* find_spmd_rule(std::string_view name) {
  for (const NamedRule& r : kRules)
    if (r.name == name) return &r.rule;
  return nullptr;
}

std::vector<std::string_view> spmd_rule_names() {
  std::vector<std::string_view> out;
  for (const NamedRule& r : kRules) out.push_back(r.name);
  return out;
}

OpBuilder& OpBuilder::spmd(const char* rule) {
  const SpmdRule* r = find_spmd_rule(rule);
  // A misspelt name is a build defect: the library refuses to load.
  if (!r) {
    std::fprintf(stderr, "oar: op %s names the unknown SPMD rule '%s'\n", op.name.c_str(), rule);
    std::abort();
  }
  op.spmd = r->fwd;
  op.spmd_reverse = r->rev;
  return *this;
}

DistSpec DistSpec::replicated(Dims shape, int64_t itemsize) {
  DistSpec s;
  s.dims_mapping.assign(shape.size(), -1);
  s.shape = std::move(shape);
  s.itemsize = itemsize;
  return s;
}

DistSpec DistSpec::sharded(Dims shape, Dims dims_mapping, int64_t itemsize) {
  DistSpec s;
  s.shape = std::move(shape);
  s.dims_mapping = std::move(dims_mapping);
  s.itemsize = itemsize;
  return s;
}

bool DistSpec::same_placement(const DistSpec& o) const {
  if (defined != o.defined) return false;
  if (!defined) return true;
  return dims_mapping == o.dims_mapping && partial_mask == o.partial_mask &&
         (partial_mask == 0 || partial_type == o.partial_type);
}

bool DistSpec::operator==(const DistSpec& o) const { return same_placement(o) && shape == o.shape; }

std::string DistSpec::to_string() const {
  if (!defined) return "{undefined}";
  std::string s = "{shape=[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  s += "], dims_mapping=[";
  for (size_t i = 0; i < dims_mapping.size(); ++i) s += (i ? ", " : "") + std::to_string(dims_mapping[i]);
  s += "]";
  if (partial_mask) {
    s += ", partial=[";
    bool first = true;
    for (int m = 0; m < 64; ++m)
      if (partial_mask >> m & 1) {
        s += (first ? "" : ", ") + std::to_string(m) + ":" + reduce_type_name(partial_type);
        first = false;
      }
    s += "]";
  }
  return s + "}";
}

SpmdFn spmd_rule_of(const OpDef& op) {
  if (op.spmd) return op.spmd;
  if (op.traits.elementwise) return spmd::elementwise;
  return nullptr;
}

SpmdReverseFn spmd_reverse_rule_of(const OpDef& op) {
  if (op.spmd) return op.spmd_reverse;
  if (op.traits.elementwise) return spmd::elementwise_reverse;
  return nullptr;
}

SpmdInfo replicate_all(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs&) {
  SpmdInfo r;
  for (size_t i = 0; i < in.size(); ++i) {
    check_spec(in[i], mesh, i);
    DistSpec s = in[i];
    if (s.defined) {
      s = DistSpec::replicated(in[i].shape, in[i].itemsize);
      r.comm_bytes += reshard_cost(in[i], s, mesh);
    }
    r.inputs.push_back(std::move(s));
  }
  return r;
}

double reshard_cost(const Placements& from, const Placements& to, const ProcessMesh& mesh, const Dims& shape,
                    int64_t itemsize) {
  OAR_CHECK(int64_t(from.size()) == mesh.ndim() && int64_t(to.size()) == mesh.ndim(), Value,
            "[oar.distributed] reshard_cost: placements need one entry per mesh dim (", mesh.ndim(), ")");
  Placements cur = from;
  double total = 0;
  for (size_t m = 0; m < cur.size(); ++m) {
    if (cur[m] == to[m]) continue;
    double n = double(mesh.shape()[m]);
    double piece = double(piece_numel(shape, cur, mesh)) * double(itemsize);
    const Placement &a = cur[m], &b = to[m];
    if (n > 1) {
      if (a.is_partial()) total += b.is_shard() ? piece * (n - 1) / n : 2 * piece * (n - 1) / n;
      else if (a.is_shard() && b.is_replicate()) total += piece * (n - 1);
      else if (a.is_shard() && b.is_shard()) total += piece * (n - 1) / n;
      // replicate -> shard / partial and shard -> partial are local
    }
    cur[m] = b;
  }
  return total;
}

double reshard_cost(const DistSpec& from, const DistSpec& to, const ProcessMesh& mesh) {
  if (!from.defined || !to.defined || from.same_placement(to)) return 0;
  return reshard_cost(placements_of(from, mesh.ndim()), placements_of(to, mesh.ndim()), mesh, from.shape,
                      from.itemsize);
}

DistSpec spec_of(const Dims& global_shape, const Placements& p, int64_t itemsize) {
  DistSpec s = DistSpec::sharded(global_shape, to_dims_mapping(p, int64_t(global_shape.size())), itemsize);
  bool first = true;
  for (const auto& [m, r] : partial_dims(p)) {
    OAR_CHECK(first || r == s.partial_type, NotImplemented,
              "[oar.distributed] a tensor partial with two reduce types is not supported: ", placements_str(p));
    s.partial_mask |= uint64_t(1) << m;
    s.partial_type = r;
    first = false;
  }
  return s;
}

DistSpec spec_of(const DistAttr& a, int64_t itemsize) { return spec_of(a.global_shape, a.placements, itemsize); }

Placements placements_of(const DistSpec& s, int64_t mesh_ndim) {
  PartialDims pd;
  for (int64_t m = 0; m < 64; ++m)
    if (s.partial_mask >> m & 1) pd.push_back({m, s.partial_type});
  return to_placements(s.dims_mapping, pd, mesh_ndim);
}

namespace spmd {
SpmdInfo elementwise(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& attrs) {
  return fwd<elementwise_notation>(mesh, in, attrs);
}
SpmdInfo elementwise_reverse(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out,
                             const Attrs& attrs) {
  return rev<elementwise_notation>(mesh, in, out, attrs);
}
}  // namespace spmd

}  // namespace oar
