// Pooling kernels: one (N, C) plane per task, spatial dims padded to three.
// Windows follow Paddle: fixed windows are clipped to the input, adaptive
// windows are [floor(a*I/O), ceil((a+1)*I/O)).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/handoff.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/onednn.h"

namespace oar::cpu {
namespace {

struct PoolGeo {
  int64_t planes;
  int64_t i[3], o[3], k[3], s[3], p[3];
  bool adaptive, exclusive;
  // xs: input shape (N, C, *i), ys: output shape (N, C, *o); attrs as ops/pool.cpp.
  PoolGeo(const Dims& xs, const Dims& ys, const Attrs& a) {
    planes = xs[0] * xs[1];
    adaptive = a.b(5);
    exclusive = a.b(6);
    int nsp = int(xs.size()) - 2, off = 3 - nsp;
    for (int j = 0; j < 3; ++j) { i[j] = o[j] = k[j] = s[j] = 1; p[j] = 0; }
    for (int j = 0; j < nsp; ++j) {
      i[off + j] = xs[2 + j];
      o[off + j] = ys[2 + j];
      if (!adaptive) { k[off + j] = a.ints(0)[j]; s[off + j] = a.ints(1)[j]; p[off + j] = a.ints(2)[j]; }
    }
  }
  int64_t isz() const { return i[0] * i[1] * i[2]; }
  int64_t osz() const { return o[0] * o[1] * o[2]; }
  void window(int j, int64_t a, int64_t& st, int64_t& en) const {
    if (adaptive) {
      st = a * i[j] / o[j];
      en = ((a + 1) * i[j] + o[j] - 1) / o[j];
    } else {
      st = a * s[j] - p[j];
      en = std::min(st + k[j], i[j]);
      st = std::max<int64_t>(st, 0);
    }
  }
  // Calls f(output flat index, window starts, window ends) for each output.
  template <typename F> void each_output(F&& f) const {
    int64_t st[3], en[3], idx = 0;
    for (int64_t a0 = 0; a0 < o[0]; ++a0) {
      window(0, a0, st[0], en[0]);
      for (int64_t a1 = 0; a1 < o[1]; ++a1) {
        window(1, a1, st[1], en[1]);
        for (int64_t a2 = 0; a2 < o[2]; ++a2) {
          window(2, a2, st[2], en[2]);
          f(idx++, st, en);
        }
      }
    }
  }
  double divisor(const int64_t* st, const int64_t* en) const {
    if (adaptive || exclusive) {
      int64_t n = 1;
      for (int j = 0; j < 3; ++j) n *= std::max<int64_t>(en[j] - st[j], 0);
      return double(n);
    }
    return double(k[0] * k[1] * k[2]);
  }
};

// take ? d : a without a branch (selected by bit mask).
template <typename C> inline C pick(bool take, C a, C d) {
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  U ua, ud;
  std::memcpy(&ua, &a, sizeof(C));
  std::memcpy(&ud, &d, sizeof(C));
  const U m = U(0) - U(take);
  const U r = (ua & ~m) | (ud & m);
  C out;
  std::memcpy(&out, &r, sizeof(C));
  return out;
}

int64_t plane_grain(int64_t per_plane) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_plane, 1)); }

// Window bounds along each spatial dim, computed once per call.
struct Windows {
  std::vector<int64_t> st[3], en[3];
  explicit Windows(const PoolGeo& g) {
    for (int j = 0; j < 3; ++j) {
      st[j].resize(size_t(g.o[j]));
      en[j].resize(size_t(g.o[j]));
      for (int64_t a = 0; a < g.o[j]; ++a) g.window(j, a, st[j][size_t(a)], en[j][size_t(a)]);
    }
  }
};

// The first maximum of each window wins; a NaN wins over numbers and the
// first NaN stays (the comparisons are written so that the loop is branch-free).
template <typename T> void max_pool_impl(const Tensor& x, Tensor& y, Tensor& mask, const Attrs& a) {
  if (y.numel() == 0) return;  // no windows to build (an adaptive size may be huge)
  PoolGeo g(x.shape(), y.shape(), a);
  Windows w(g);
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  int32_t* mp = mask.data<int32_t>();
  using C = compute_t<T>;
  if (!g.adaptive && g.i[0] == 1 && g.k[1] == 2 && g.k[2] == 2 && g.s[1] == 2 && g.s[2] == 2 && g.p[1] == 0 &&
      g.p[2] == 0 && 2 * g.o[1] <= g.i[1] && 2 * g.o[2] <= g.i[2]) {
    // 2x2, stride 2 (MaxPool2D(2)), no window clipped (as ceil_mode's last
    // ones are), in two branch-free passes that vectorise: the larger of each
    // column pair of every input row (across all rows of a chunk of planes at
    // once when the rows have no odd last column), then the larger of each
    // row pair. The top or left entry wins ties and NaN wins over numbers, so
    // the first maximum in window order (and the first NaN) is kept.
    const int64_t ih = g.i[1], iw = g.i[2], ow = g.o[2], oh = g.o[1];
    const int64_t chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(ih * ow, 1));  // planes per pass
    parallel_for(g.planes, plane_grain(g.isz()), [&](int64_t b, int64_t e) {
      const int64_t most = std::min(chunk, e - b);
      std::vector<C> hm(size_t(most * ih * ow));
      std::vector<int32_t> hc(hm.size());  // 0 or 1 (int32: AVX2 gathers no bytes)
      // Per output of a chunk: the first-pass entry of its window's top row,
      // and its window's top-left element within the plane (the mask).
      std::vector<int32_t> top(size_t(most * oh * ow)), base(top.size());
      for (int64_t pl = 0, j = 0; pl < most; ++pl)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t c = 0; c < ow; ++c, ++j) {
            top[size_t(j)] = int32_t((pl * ih + 2 * r) * ow + c);
            base[size_t(j)] = int32_t(2 * r * iw + 2 * c);
          }
      auto pairs = [&](const T* x, C* m, int32_t* c, int64_t n) {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          const C l = C(x[2 * j]), r = C(x[2 * j + 1]);
          const bool take = (r > l) | ((r != r) & (l == l));
          m[j] = take ? r : l;
          c[j] = int32_t(take);
        }
      };
      for (int64_t p0 = b; p0 < e; p0 += chunk) {
        const int64_t np = std::min(chunk, e - p0);
        const T* xs = xp + p0 * g.isz();
        if (iw == 2 * ow) {
          pairs(xs, hm.data(), hc.data(), np * ih * ow);
        } else {
          for (int64_t row = 0; row < np * ih; ++row)
            pairs(xs + row * iw, hm.data() + row * ow, hc.data() + row * ow, ow);
        }
        // One loop over the chunk's outputs: output j reads the first pass's
        // entries top[j] and top[j] + ow (gathers, which GCC leaves scalar
        // for generic tuning; pick keeps the scalar loop free of branches,
        // which random data would mispredict).
        const int64_t n = np * oh * ow;
        T* yq = yp + p0 * g.osz();
        int32_t* mq = mp + p0 * g.osz();
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          const int32_t t = top[size_t(j)], u = t + int32_t(ow);
          const C a = hm[size_t(t)], d = hm[size_t(u)];
          const int32_t ca = hc[size_t(t)], cd = int32_t(iw) + hc[size_t(u)];
          const bool take = (d > a) | ((d != d) & (a == a));
          yq[j] = T(pick(take, a, d));
          mq[j] = base[size_t(j)] + ca + int32_t(take) * (cd - ca);
        }
      }
    });
    return;
  }
  // outputs a2 with 0 <= a2*s - p + kw < i, per kernel offset kw
  auto tap_range = [&g](std::vector<int64_t>& lo, std::vector<int64_t>& hi) {
    lo.resize(size_t(g.k[2]));
    hi.resize(size_t(g.k[2]));
    for (int64_t kw = 0; kw < g.k[2]; ++kw) {
      const int64_t off = kw - g.p[2];
      lo[size_t(kw)] = off >= 0 ? 0 : (-off + g.s[2] - 1) / g.s[2];
      hi[size_t(kw)] = std::min(g.o[2], g.i[2] - off > 0 ? (g.i[2] - off - 1) / g.s[2] + 1 : 0);
    }
  };
  if (!g.adaptive && g.i[0] == 1 && g.s[2] <= g.i[2]) {
    // (A stride wider than the row would make the phase buffer stride-sized.)
    // One and two spatial dims, separably: the maximum of each input row
    // over every output column's window (a horizontal pass), then of those
    // over each output row's window rows (a vertical pass). Each input row
    // is split by column phase (column mod stride) first, so that a kernel
    // offset reads one phase contiguously and both passes vectorise. Rows
    // first and columns within them keep the window order: the first
    // maximum still wins, and the first NaN.
    const int64_t ih = g.i[1], iw = g.i[2], oh = g.o[1], ow = g.o[2], sw = g.s[2];
    const int64_t plen = (iw + sw - 1) / sw;
    std::vector<int64_t> lo, hi;
    tap_range(lo, hi);
    parallel_for(g.planes, plane_grain(g.isz()), [&](int64_t b, int64_t e) {
      std::vector<C> phase(static_cast<size_t>(sw * plen)), hm(static_cast<size_t>(ih * ow));
      std::vector<C> acc(static_cast<size_t>(ow));
      std::vector<int32_t> hidx(size_t(ih * ow));
      for (int64_t pl = b; pl < e; ++pl) {
        const T* xq = xp + pl * g.isz();
        for (int64_t j = 0; j < ih; ++j) {
          const T* xr = xq + j * iw;
          if (sw == 2) {  // one loop over both phases: the compiler vectorises the pair
            C *ev = phase.data(), *od = ev + plen;
            const int64_t pairs = iw / 2;
            for (int64_t c = 0; c < pairs; ++c) {
              ev[c] = C(xr[2 * c]);
              od[c] = C(xr[2 * c + 1]);
            }
            if (iw % 2) ev[pairs] = C(xr[iw - 1]);
          } else {
            for (int64_t q = 0; q < sw; ++q) {
              C* ph = phase.data() + q * plen;
              for (int64_t c = 0; q + c * sw < iw; ++c) ph[c] = C(xr[q + c * sw]);
            }
          }
          C* bp = hm.data() + j * ow;
          int32_t* ap = hidx.data() + j * ow;
          std::fill(ap, ap + ow, -1);
          std::fill(bp, bp + ow, C(0));
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            // column a2*sw + off = sw*(a2 + d) + q: phase q, element a2 + d
            const int64_t off = kw - g.p[2], q = ((off % sw) + sw) % sw, d = (off - q) / sw;
            const C* ph = phase.data() + q * plen;
            const int32_t tap = int32_t(kw);
#pragma omp simd
            for (int64_t a2 = lo[size_t(kw)]; a2 < hi[size_t(kw)]; ++a2) {
              C v = ph[a2 + d];
              bool take = (ap[a2] < 0) | (v > bp[a2]) | ((v != v) & (bp[a2] == bp[a2]));
              bp[a2] = take ? v : bp[a2];
              ap[a2] = take ? tap : ap[a2];
            }
          }
        }
        T* yq = yp + pl * g.osz();
        int32_t* mq = mp + pl * g.osz();
        for (int64_t r = 0; r < oh; ++r) {
          T* yr = yq + r * ow;
          int32_t* mr = mq + r * ow;
          std::fill(mr, mr + ow, -1);
          for (int64_t j = w.st[1][size_t(r)]; j < w.en[1][size_t(r)]; ++j) {
            const C* vp = hm.data() + j * ow;
            const int32_t* ip = hidx.data() + j * ow;
            const int32_t row = int32_t(j * iw);
            C* bp = acc.data();
#pragma omp simd
            for (int64_t a2 = 0; a2 < ow; ++a2) {
              C v = vp[a2];
              bool take = (ip[a2] >= 0) & ((mr[a2] < 0) | (v > bp[a2]) | ((v != v) & (bp[a2] == bp[a2])));
              bp[a2] = take ? v : bp[a2];
              mr[a2] = take ? row + ip[a2] : mr[a2];
            }
          }
          // mr holds row * iw + tap; the column is a2 * sw + tap - p
          const int32_t sw32 = int32_t(sw), p32 = int32_t(g.p[2]);
#pragma omp simd
          for (int64_t a2 = 0; a2 < ow; ++a2) {
            const bool any = mr[a2] >= 0;
            yr[a2] = any ? T(acc[size_t(a2)]) : T(0);
            mr[a2] = any ? mr[a2] + int32_t(a2) * sw32 - p32 : -1;
          }
        }
      }
    });
    return;
  }
  if (!g.adaptive) {
    // A row of outputs at a time: for each kernel offset, every output of the
    // row whose window holds that offset compares one element, a loop over
    // the row that vectorises. Offsets are visited in window order, so the
    // first maximum still wins.
    std::vector<int64_t> lo, hi;
    tap_range(lo, hi);
    parallel_for(g.planes, plane_grain(g.isz()), [&](int64_t b, int64_t e) {
      std::vector<C> best(size_t(g.o[2]));
      std::vector<int32_t> arg(size_t(g.o[2]));
      for (int64_t pl = b; pl < e; ++pl) {
        const T* xq = xp + pl * g.isz();
        for (int64_t a0 = 0; a0 < g.o[0]; ++a0)
          for (int64_t a1 = 0; a1 < g.o[1]; ++a1) {
            std::fill(best.begin(), best.end(), -std::numeric_limits<C>::infinity());
            std::fill(arg.begin(), arg.end(), -1);
            C* bp = best.data();
            int32_t* ap = arg.data();
            for (int64_t j0 = w.st[0][size_t(a0)]; j0 < w.en[0][size_t(a0)]; ++j0)
              for (int64_t j1 = w.st[1][size_t(a1)]; j1 < w.en[1][size_t(a1)]; ++j1) {
                const int64_t row = (j0 * g.i[1] + j1) * g.i[2];
                for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                  const int64_t off = kw - g.p[2], st = g.s[2], h = hi[size_t(kw)];
#pragma omp simd
                  for (int64_t a2 = lo[size_t(kw)]; a2 < h; ++a2) {
                    const int64_t f = row + a2 * st + off;
                    C v = C(xq[f]);
                    bool take = (ap[a2] < 0) | (v > bp[a2]) | ((v != v) & (bp[a2] == bp[a2]));
                    bp[a2] = take ? v : bp[a2];
                    ap[a2] = take ? int32_t(f) : ap[a2];
                  }
                }
              }
            const int64_t o0 = pl * g.osz() + (a0 * g.o[1] + a1) * g.o[2];
            for (int64_t a2 = 0; a2 < g.o[2]; ++a2) {
              yp[o0 + a2] = ap[a2] < 0 ? T(0) : T(bp[a2]);
              mp[o0 + a2] = ap[a2];
            }
          }
      }
    });
    return;
  }
  parallel_for(g.planes, plane_grain(g.isz()), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xq = xp + pl * g.isz();
      T* yq = yp + pl * g.osz();
      int32_t* mq = mp + pl * g.osz();
      int64_t oi = 0;
      for (int64_t a0 = 0; a0 < g.o[0]; ++a0)
        for (int64_t a1 = 0; a1 < g.o[1]; ++a1)
          for (int64_t a2 = 0; a2 < g.o[2]; ++a2, ++oi) {
            const int64_t s0 = w.st[0][size_t(a0)], e0 = w.en[0][size_t(a0)];
            const int64_t s1 = w.st[1][size_t(a1)], e1 = w.en[1][size_t(a1)];
            const int64_t s2 = w.st[2][size_t(a2)], e2 = w.en[2][size_t(a2)];
            if (s0 >= e0 || s1 >= e1 || s2 >= e2) {
              yq[oi] = T(0);
              mq[oi] = -1;
              continue;
            }
            int64_t arg = (s0 * g.i[1] + s1) * g.i[2] + s2;
            C best = C(xq[arg]);
            for (int64_t j0 = s0; j0 < e0; ++j0)
              for (int64_t j1 = s1; j1 < e1; ++j1) {
                const int64_t row = (j0 * g.i[1] + j1) * g.i[2];
                for (int64_t j2 = s2; j2 < e2; ++j2) {
                  C v = C(xq[row + j2]);
                  bool take = (v > best) | ((v != v) & (best == best));
                  best = take ? v : best;
                  arg = take ? row + j2 : arg;
                }
              }
            yq[oi] = T(best);
            mq[oi] = int32_t(arg);
          }
    }
  });
}

// Pooling of a 2-D float32 input that a graph executor keeps in oneDNN's
// layout (Note [layout hand-off] in kernels/cpu/handoff.h), by oneDNN in that
// layout, where the windows have one size: fixed windows (ceil_mode's last
// one clipped, which for max pooling is right padding), or adaptive ones
// where the output size divides the input size. For max pooling the executor
// has made sure that nothing reads the mask. False where this does not apply.
bool kept_pool(const Tensor& x, Tensor& y, const Attrs& a, bool max) {
  namespace du = dnnl_util;
  using dnnl::memory;
  if (x.dtype() != DType::Float32 || x.dim() != 4) return false;
  std::optional<memory::desc> src = du::kept_layout(x);
  if (!src) return false;
  const Dims &xs = x.shape(), &ys = y.shape();
  memory::dims k(2), st(2), pl(2), pr(2);
  for (size_t j = 0; j < 2; ++j) {
    const int64_t i = xs[2 + j], o = ys[2 + j];
    if (a.b(5)) {  // adaptive
      if (i % o != 0) return false;
      k[j] = st[j] = i / o;
      pl[j] = pr[j] = 0;
      continue;
    }
    k[j] = a.ints(0)[j], st[j] = a.ints(1)[j], pl[j] = a.ints(2)[j], pr[j] = a.ints(3)[j];
    // oneDNN sizes the output as (i - k + pl + pr) / s + 1.
    if ((i - k[j] + pl[j] + pr[j]) / st[j] + 1 != o) {
      if (!max) return false;  // an average would count the extra padding
      pr[j] = (o - 1) * st[j] + k[j] - i - pl[j];
    }
    if (pl[j] >= k[j] || pr[j] >= k[j] || pr[j] < 0) return false;
  }
  using dnnl::algorithm;
  const algorithm alg = max ? algorithm::pooling_max
                        : a.b(6) ? algorithm::pooling_avg_exclude_padding
                                 : algorithm::pooling_avg_include_padding;
  std::string key = "kept_pool" + std::to_string(int(alg)) + du::layout_key(*src) + du::key_dims(ys) +
                    du::key_dims(Dims(k.begin(), k.end())) + du::key_dims(Dims(st.begin(), st.end())) +
                    du::key_dims(Dims(pl.begin(), pl.end())) + du::key_dims(Dims(pr.begin(), pr.end()));
  try {
    du::Prim prim = du::cached(key, [&]() -> du::Prim {
      memory::desc dst(memory::dims(ys.begin(), ys.end()), memory::data_type::f32, memory::format_tag::any);
      dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, *src, dst, st, k, pl, pr);
      dnnl::pooling_forward::primitive_desc pd(d, du::attr(), du::engine());
      return {dnnl::pooling_forward(pd), {pd.src_desc(), pd.dst_desc()}};
    });
    du::execute(prim, {{DNNL_ARG_SRC, &x, du::plain_md(xs, x.dtype()), prim.mds[0], false},
                       {DNNL_ARG_DST, &y, du::plain_md(ys, y.dtype()), prim.mds[1], true}}, key);
  } catch (const dnnl::error&) {
    return false;  // no oneDNN pooling for this layout: the plain kernel
  }
  return true;
}

void max_pool_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (kept_pool(in[0], out[0], a, true)) return;
  materialize_layout_handoff(in[0]);
  visit_float(in[0].dtype(), [&](auto t) { max_pool_impl<decltype(t)>(in[0], out[0], out[1], a); });
}

template <typename T> void avg_pool_impl(const Tensor& x, Tensor& y, const Attrs& a) {
  PoolGeo g(x.shape(), y.shape(), a);
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  using C = compute_t<T>;
  parallel_for(g.planes, plane_grain(g.isz()), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xq = xp + pl * g.isz();
      T* yq = yp + pl * g.osz();
      g.each_output([&](int64_t oi, const int64_t* st, const int64_t* en) {
        C acc = 0;
        for (int64_t j0 = st[0]; j0 < en[0]; ++j0)
          for (int64_t j1 = st[1]; j1 < en[1]; ++j1)
            for (int64_t j2 = st[2]; j2 < en[2]; ++j2) acc += C(xq[(j0 * g.i[1] + j1) * g.i[2] + j2]);
        double d = g.divisor(st, en);
        yq[oi] = d > 0 ? T(acc / C(d)) : T(0);
      });
    }
  });
}

void avg_pool_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (kept_pool(in[0], out[0], a, false)) return;
  materialize_layout_handoff(in[0]);
  visit_float(in[0].dtype(), [&](auto t) { avg_pool_impl<decltype(t)>(in[0], out[0], a); });
}

// Scatter form within a plane; planes are independent so threads never collide.
template <typename T> void avg_pool_grad_impl(const Tensor& gy, Tensor& gx, const Attrs& a) {
  PoolGeo g(gx.shape(), gy.shape(), a);
  const T* yp = gy.data<T>();
  T* xp = gx.data<T>();
  using C = compute_t<T>;
  parallel_for(g.planes, plane_grain(g.isz()), [&](int64_t b, int64_t e) {
    std::vector<C> acc(size_t(g.isz()));
    for (int64_t pl = b; pl < e; ++pl) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* yq = yp + pl * g.osz();
      g.each_output([&](int64_t oi, const int64_t* st, const int64_t* en) {
        double d = g.divisor(st, en);
        if (d <= 0) return;
        C v = C(yq[oi]) / C(d);
        for (int64_t j0 = st[0]; j0 < en[0]; ++j0)
          for (int64_t j1 = st[1]; j1 < en[1]; ++j1)
            for (int64_t j2 = st[2]; j2 < en[2]; ++j2) acc[size_t((j0 * g.i[1] + j1) * g.i[2] + j2)] += v;
      });
      T* xq = xp + pl * g.isz();
      for (int64_t f = 0; f < g.isz(); ++f) xq[f] = T(acc[size_t(f)]);
    }
  });
}

void avg_pool_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_float(in[0].dtype(), [&](auto t) { avg_pool_grad_impl<decltype(t)>(in[0], out[0], a); });
}

template <typename T> void max_pool_grad_impl(const Tensor& gy, const Tensor& mask, Tensor& gx) {
  int64_t planes = gx.shape()[0] * gx.shape()[1];
  int64_t isz = planes ? gx.numel() / planes : 0, osz = planes ? gy.numel() / planes : 0;
  const T* yp = gy.data<T>();
  const int32_t* mp = mask.data<int32_t>();
  T* xp = gx.data<T>();
  using C = compute_t<T>;
  parallel_for(planes, plane_grain(isz), [&](int64_t b, int64_t e) {
    std::vector<C> acc(static_cast<size_t>(isz));
    for (int64_t pl = b; pl < e; ++pl) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t o = 0; o < osz; ++o) {
        int32_t m = mp[pl * osz + o];
        if (m >= 0 && m < isz) acc[size_t(m)] += C(yp[pl * osz + o]);
      }
      for (int64_t f = 0; f < isz; ++f) xp[pl * isz + f] = T(acc[size_t(f)]);
    }
  });
}

void max_pool_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_float(in[0].dtype(), [&](auto t) { max_pool_grad_impl<decltype(t)>(in[0], in[1], out[0]); });
}

template <typename T> void max_pool_gather_impl(const Tensor& g, const Tensor& mask, Tensor& out) {
  int64_t planes = g.shape()[0] * g.shape()[1];
  int64_t isz = planes ? g.numel() / planes : 0, osz = planes ? mask.numel() / planes : 0;
  const T* gp = g.data<T>();
  const int32_t* mp = mask.data<int32_t>();
  T* op = out.data<T>();
  parallel_for(planes * osz, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      int32_t m = mp[k];
      op[k] = (m >= 0 && m < isz) ? gp[(k / osz) * isz + m] : T(0);
    }
  });
}

void max_pool_gather_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_float(in[0].dtype(), [&](auto t) { max_pool_gather_impl<decltype(t)>(in[0], in[1], out[0]); });
}

KernelRegistrar r1("max_pool", DeviceType::CPU, OAR_FLOAT_DTYPES, max_pool_kernel);
KernelRegistrar r2("avg_pool", DeviceType::CPU, OAR_FLOAT_DTYPES, avg_pool_kernel);
KernelRegistrar r3("avg_pool_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, avg_pool_grad_kernel);
KernelRegistrar r4("max_pool_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, max_pool_grad_kernel);
KernelRegistrar r5("max_pool_gather", DeviceType::CPU, OAR_FLOAT_DTYPES, max_pool_gather_kernel);

}  // namespace
}  // namespace oar::cpu
