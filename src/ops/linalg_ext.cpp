// Composite linear-algebra and elementwise extras; see linalg_ext.h. Nothing
// here has its own kernel or gradient rule: each function is written with the
// C++ op API, so autograd differentiates through the ops it is made of.
#include "ops/linalg_ext.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace oar::ops {
namespace {

DType promote_for(const Tensor& x, const Tensor& y, const char* api) {
  DType t = promote_types(x.dtype(), y.dtype());
  OAR_CHECK(t != DType::Bool, Type, "[", api, "] does not support bool tensors");
  return t;
}

// Sum that keeps the input dtype (ops::sum widens small integers).
Tensor sum_keep(const Tensor& x, const Dims& axes) {
  if (axes.empty()) return x;
  if (x.dtype() == DType::Bool) return sum(x, axes);
  return sum(x, axes, false, x.dtype());
}

int64_t checked_mul(int64_t a, int64_t b, const char* api) {
  int64_t r = 0;
  OAR_CHECK(!__builtin_mul_overflow(a, b, &r), Value, "[", api, "] size overflows int64");
  return r;
}

// reshape() follows Paddle, where a 0 in the target copies the input dim; here
// a 0 means an empty dim. An empty result stays connected to x for autograd.
Tensor reshape_to(const Tensor& x, const Dims& shape) {
  bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  if (!has_zero) return reshape(x, shape);
  Dims ones(shape.size(), 1);
  return expand(reshape(x.dim() == 0 ? x : cast(sum(x), x.dtype()), ones), shape);
}

}  // namespace

Tensor bmm(const Tensor& x, const Tensor& y) {
  OAR_CHECK(x.dim() == 3 && y.dim() == 3, Value, "[oar.bmm] x and y must be 3-D, got shapes ",
            shape_str(x.shape()), " and ", shape_str(y.shape()));
  OAR_CHECK(x.size(0) == y.size(0), Value, "[oar.bmm] batch sizes differ: x.shape[0] (", x.size(0),
            ") must equal y.shape[0] (", y.size(0), ")");
  OAR_CHECK(x.size(2) == y.size(1), Value, "[oar.bmm] x.shape[2] (", x.size(2), ") must equal y.shape[1] (",
            y.size(1), ")");
  return matmul(x, y);
}

Tensor mm(const Tensor& x, const Tensor& y) {
  OAR_CHECK(x.dim() >= 1 && y.dim() >= 1, Value, "[oar.mm] operands must be at least 1-D, got shapes ",
            shape_str(x.shape()), " and ", shape_str(y.shape()));
  return matmul(x, y);
}

Tensor dot(const Tensor& x, const Tensor& y) {
  OAR_CHECK((x.dim() == 1 || x.dim() == 2) && x.dim() == y.dim(), Value,
            "[oar.dot] x and y must both be 1-D or both 2-D, got shapes ", shape_str(x.shape()), " and ",
            shape_str(y.shape()));
  OAR_CHECK(x.shape() == y.shape(), Value, "[oar.dot] x and y must have the same shape, got ",
            shape_str(x.shape()), " and ", shape_str(y.shape()));
  DType t = promote_types(x.dtype(), y.dtype());
  Tensor xc = cast(x, t), yc = cast(y, t);
  // A 1-D float/complex dot is one matmul (BLAS); everything else multiplies and sums.
  if (x.dim() == 1 && is_inexact(t)) return matmul(xc, yc);
  return sum_keep(multiply(xc, yc), Dims{x.dim() - 1});
}

Tensor outer(const Tensor& x, const Tensor& y) {
  return multiply(reshape_to(x, Dims{x.numel(), 1}), reshape_to(y, Dims{1, y.numel()}));
}

Tensor t(const Tensor& x) {
  OAR_CHECK(x.dim() <= 2, Value, "[oar.t] x must have at most 2 dims, got shape ", shape_str(x.shape()),
            "; use oar.transpose for higher ranks");
  return x.dim() < 2 ? x : transpose(x, Dims{1, 0});
}

Tensor kron(const Tensor& x, const Tensor& y) {
  int64_t nd = std::max(x.dim(), y.dim());
  Dims xs, ys, out;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t a = i - (nd - x.dim()) >= 0 ? x.size(i - (nd - x.dim())) : 1;
    int64_t b = i - (nd - y.dim()) >= 0 ? y.size(i - (nd - y.dim())) : 1;
    out.push_back(checked_mul(a, b, "oar.kron"));
    if (a == 1 && b == 1) continue;  // the final reshape restores it
    if (a == 1 || b == 1) {  // no interleaving needed: one dim
      xs.push_back(a);
      ys.push_back(b);
      continue;
    }
    xs.push_back(a);
    xs.push_back(1);
    ys.push_back(1);
    ys.push_back(b);
  }
  OAR_CHECK(xs.size() <= size_t(kMaxRank), Value, "[oar.kron] interleaving the axes of x ", shape_str(x.shape()),
            " and y ", shape_str(y.shape()), " needs ", xs.size(), " dimensions; tensors have at most ", kMaxRank);
  // out[i*b + j] = x[i] * y[j]: interleave the axes of x and y, multiply, merge pairs.
  return reshape_to(multiply(reshape_to(x, xs), reshape_to(y, ys)), out);
}

Tensor cross(const Tensor& x0, const Tensor& y0, int64_t axis) {
  DType dt = promote_for(x0, y0, "oar.cross");
  Dims shape = broadcast_shapes(x0.shape(), y0.shape(), "oar.cross");
  Tensor x = expand(cast(x0, dt), shape), y = expand(cast(y0, dt), shape);
  int64_t nd = int64_t(shape.size()), ax = -1;
  if (axis == 9) {
    for (int64_t i = 0; i < nd && ax < 0; ++i)
      if (shape[i] == 3) ax = i;
    OAR_CHECK(ax >= 0, Value, "[oar.cross] no axis of size 3 in shape ", shape_str(shape));
  } else {
    ax = normalize_axis(axis, nd, "oar.cross");
    OAR_CHECK(shape[ax] == 3, Value, "[oar.cross] axis ", axis, " must have size 3, got shape ", shape_str(shape));
  }
  auto at = [&](const Tensor& v, int64_t k) { return strided_slice(v, Dims{ax}, Dims{k}, Dims{k + 1}, Dims{1}); };
  // Select component i of the result with a one-hot mask along `ax` (where(),
  // unlike multiplying by a one-hot vector, keeps inf and nan where they belong).
  Dims ms(shape.size(), 1);
  ms[ax] = 3;
  Tensor pos = reshape_to(arange(Scalar(int64_t(0)), Scalar(int64_t(3)), Scalar(int64_t(1)), DType::Int64), ms);
  Tensor out;
  for (int64_t i = 2; i >= 0; --i) {
    int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    Tensor c = subtract(multiply(at(x, j), at(y, k)), multiply(at(x, k), at(y, j)));
    out = i == 2 ? expand(c, shape) : where(equal(pos, scalar_tensor(Scalar(i), DType::Int64)), c, out);
  }
  return out;
}

// ---- einsum
// Labels: letters are their character codes; the dims covered by '...' get
// labels -1, -2, ... counted from the left of the widest ellipsis, so that
// ellipsis dims of operands of different rank line up from the right.
namespace {

constexpr int kEllipsis = -1000;

std::vector<int> parse_subscript(const std::string& s, const char* what) {
  std::vector<int> out;
  bool seen = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      OAR_CHECK(s.compare(i, 3, "...") == 0, Value, "[oar.einsum] '.' must appear as '...' in ", what, " '", s, "'");
      OAR_CHECK(!seen, Value, "[oar.einsum] '...' may appear only once in ", what, " '", s, "'");
      seen = true;
      out.push_back(kEllipsis);
      i += 2;
    } else {
      OAR_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'), Value,
                "[oar.einsum] subscripts must be letters or '...', got '", c, "' in ", what, " '", s, "'");
      out.push_back(int(c));
    }
  }
  return out;
}

struct Term {
  Tensor t;
  std::vector<int> labels;  // one per dim of t
};

int64_t index_of(const std::vector<int>& v, int l) {
  return int64_t(std::find(v.begin(), v.end(), l) - v.begin());
}

// Takes diagonals of repeated labels and sums labels that nothing else needs.
Term reduce_term(Term a, const std::set<int>& keep) {
  for (bool again = true; again;) {
    again = false;
    for (size_t p = 0; p < a.labels.size() && !again; ++p) {
      for (size_t q = p + 1; q < a.labels.size() && !again; ++q) {
        if (a.labels[p] != a.labels[q]) continue;
        int64_t n = a.t.size(int64_t(p));
        Dims ms(a.labels.size(), 1);
        ms[p] = n;
        ms[q] = n;
        Tensor mask = reshape_to(eye(n, n, a.t.dtype()), ms);
        a.t = sum_keep(multiply(a.t, mask), Dims{int64_t(q)});
        a.labels.erase(a.labels.begin() + int64_t(q));
        again = true;
      }
    }
  }
  Dims drop;
  std::vector<int> rest;
  for (size_t i = 0; i < a.labels.size(); ++i) {
    if (keep.count(a.labels[i])) rest.push_back(a.labels[i]);
    else drop.push_back(int64_t(i));
  }
  a.t = sum_keep(a.t, drop);
  a.labels = rest;
  return a;
}

// One batched matmul: [batch, a-only, shared] x [batch, shared, b-only].
Term contract(Term a, Term b, const std::set<int>& keep) {
  std::vector<int> batch, sum_l, fa, fb;
  std::map<int, int64_t> size;
  for (size_t i = 0; i < a.labels.size(); ++i) size[a.labels[i]] = a.t.size(int64_t(i));
  for (size_t i = 0; i < b.labels.size(); ++i) {
    int l = b.labels[i];
    int64_t s = b.t.size(int64_t(i));
    size[l] = size.count(l) ? std::max(size[l], s) : s;  // ellipsis dims broadcast
  }
  for (int l : a.labels) {
    bool in_b = index_of(b.labels, l) < int64_t(b.labels.size());
    if (in_b) (keep.count(l) ? batch : sum_l).push_back(l);
    else fa.push_back(l);
  }
  for (int l : b.labels)
    if (index_of(a.labels, l) == int64_t(a.labels.size())) fb.push_back(l);

  auto arrange = [&](const Term& t, const std::vector<std::vector<int>*>& groups) {
    Dims perm, full, mat;
    for (auto* g : groups) {
      int64_t p = 1;
      for (int l : *g) {
        perm.push_back(index_of(t.labels, l));
        full.push_back(size[l]);
        p = checked_mul(p, size[l], "oar.einsum");
      }
      mat.push_back(p);
    }
    Tensor v = transpose(t.t, perm);
    if (v.shape() != full) v = expand(v, full);
    return reshape_to(v, mat);
  };
  Tensor am = arrange(a, {&batch, &fa, &sum_l});
  Tensor bm = arrange(b, {&batch, &sum_l, &fb});
  Tensor r = matmul(am, bm);
  Term out;
  Dims shape;
  for (auto* g : {&batch, &fa, &fb})
    for (int l : *g) {
      out.labels.push_back(l);
      shape.push_back(size[l]);
    }
  out.t = reshape_to(r, shape);
  return out;
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  OAR_CHECK(!operands.empty(), Value, "[oar.einsum] needs at least one operand");
  size_t arrow = eq.find("->");
  bool explicit_out = arrow != std::string::npos;
  std::string lhs = eq.substr(0, arrow), rhs = explicit_out ? eq.substr(arrow + 2) : "";
  std::vector<std::string> subs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    subs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  OAR_CHECK(subs.size() == operands.size(), Value, "[oar.einsum] the equation '", equation, "' has ", subs.size(),
            " operand subscripts but ", operands.size(), " operands were given");

  std::vector<std::vector<int>> parsed;
  int64_t ell = 0;  // widest ellipsis
  for (size_t i = 0; i < subs.size(); ++i) {
    parsed.push_back(parse_subscript(subs[i], "an operand"));
    const auto& p = parsed.back();
    bool has_ell = std::count(p.begin(), p.end(), kEllipsis) > 0;
    int64_t letters = int64_t(p.size()) - (has_ell ? 1 : 0), nd = operands[i].dim();
    OAR_CHECK(has_ell ? letters <= nd : letters == nd, Value, "[oar.einsum] subscripts '", subs[i],
              "' do not match operand ", i, " of shape ", shape_str(operands[i].shape()));
    if (has_ell) ell = std::max(ell, nd - letters);
  }

  std::vector<Term> terms;
  std::map<int, int64_t> size;
  std::map<int, int> count;
  for (size_t i = 0; i < parsed.size(); ++i) {
    Term tm{operands[i], {}};
    int64_t nd = operands[i].dim(), e = nd - (int64_t(parsed[i].size()) - 1);
    for (int l : parsed[i]) {
      if (l == kEllipsis) {
        for (int64_t j = 0; j < e; ++j) tm.labels.push_back(-int(ell - e + j) - 1);
      } else {
        tm.labels.push_back(l);
      }
    }
    for (size_t d = 0; d < tm.labels.size(); ++d) {
      int l = tm.labels[d];
      int64_t s = tm.t.size(int64_t(d));
      count[l] += 1;
      auto it = size.find(l);
      if (it == size.end()) { size[l] = s; continue; }
      if (l >= 0) {
        OAR_CHECK(it->second == s, Value, "[oar.einsum] label '", char(l), "' has size ", it->second,
                  " in one place and ", s, " in another (operand ", i, ", shape ", shape_str(tm.t.shape()), ")");
      } else {
        OAR_CHECK(it->second == s || it->second == 1 || s == 1, Value,
                  "[oar.einsum] the dims covered by '...' cannot be broadcast (operand ", i, ", shape ",
                  shape_str(tm.t.shape()), ")");
        it->second = std::max(it->second, s);
      }
    }
    terms.push_back(std::move(tm));
  }

  std::vector<int> out_labels;
  if (explicit_out) {
    for (int l : parse_subscript(rhs, "the output")) {
      if (l == kEllipsis) {
        for (int64_t j = 0; j < ell; ++j) out_labels.push_back(-int(j) - 1);
        continue;
      }
      OAR_CHECK(count.count(l), Value, "[oar.einsum] output label '", char(l), "' does not appear in any operand");
      OAR_CHECK(index_of(out_labels, l) == int64_t(out_labels.size()), Value, "[oar.einsum] output label '",
                char(l), "' appears more than once");
      out_labels.push_back(l);
    }
  } else {
    for (int64_t j = 0; j < ell; ++j) out_labels.push_back(-int(j) - 1);
    for (auto& [l, c] : count)  // std::map: letters come out in ASCII order
      if (l >= 0 && c == 1) out_labels.push_back(l);
  }

  std::set<int> out_set(out_labels.begin(), out_labels.end());
  auto needed_after = [&](size_t i) {  // labels of the output and of operands after i
    std::set<int> k = out_set;
    for (size_t j = i + 1; j < terms.size(); ++j) k.insert(terms[j].labels.begin(), terms[j].labels.end());
    return k;
  };
  // Reduce each operand alone first: diagonals, and labels used nowhere else.
  for (size_t i = 0; i < terms.size(); ++i) {
    std::set<int> k = out_set;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i) k.insert(terms[j].labels.begin(), terms[j].labels.end());
    terms[i] = reduce_term(terms[i], k);
  }
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = contract(acc, terms[i], needed_after(i));
  acc = reduce_term(acc, out_set);

  Dims perm;
  for (int l : out_labels) perm.push_back(index_of(acc.labels, l));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  // A fresh tensor even when nothing changed, like every other op.
  return identity ? (acc.t.same(operands[0]) ? clone(acc.t) : acc.t) : transpose(acc.t, perm);
}

// ---- elementwise and creation leftovers

Tensor lerp(const Tensor& x0, const Tensor& y0, const Tensor& w0) {
  DType dt = promote_types(promote_types(x0.dtype(), y0.dtype()), w0.dtype());
  OAR_CHECK(is_inexact(dt), Type, "[oar.lerp] needs floating point or complex inputs, got ", dtype_name(x0.dtype()),
            ", ", dtype_name(y0.dtype()), " and ", dtype_name(w0.dtype()));
  Tensor x = cast(x0, dt), y = cast(y0, dt), w = cast(w0, dt);
  return add(x, multiply(w, subtract(y, x)));
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  DType dt = x.dtype();
  if (!is_inexact(dt)) return clone(x);
  if (is_complex(dt)) return complex(nan_to_num(real(x), nan, posinf, neginf), nan_to_num(imag(x), nan, posinf, neginf));
  double big = dt == DType::Float64   ? std::numeric_limits<double>::max()
               : dt == DType::Float32 ? double(std::numeric_limits<float>::max())
               : dt == DType::Float16 ? 65504.0
                                      : 3.3895313892515355e38;  // bfloat16
  double inf = std::numeric_limits<double>::infinity();
  Tensor out = where(isnan(x), scalar_tensor(Scalar(nan), dt), x);
  out = where(equal(x, scalar_tensor(Scalar(inf), dt)), scalar_tensor(Scalar(posinf.value_or(big)), dt), out);
  return where(equal(x, scalar_tensor(Scalar(-inf), dt)), scalar_tensor(Scalar(neginf.value_or(-big)), dt), out);
}

Tensor logspace(double start, double stop, int64_t num, double base, DType dtype) {
  OAR_CHECK(num >= 0, Value, "[oar.logspace] num must be non-negative, got ", num);
  Tensor e = linspace(start, stop, num, DType::Float64);
  Tensor out = binary_scalar("pow", e, Scalar(base), true);
  // Integer results are rounded first so that 10**2 does not become 99.
  if (is_integral(dtype)) out = unary("round", out);
  return cast(out, dtype);
}

}  // namespace oar::ops
