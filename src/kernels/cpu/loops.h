// The shared elementwise iterator: an op writes its scalar functor once and
// this runs it over broadcast, strided operands of any dtype, vectorisable in
// the contiguous case and threaded above a size threshold.
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/cpu/vmath.h"
#include "tensor/tensor.h"

namespace oar::cpu {

constexpr int64_t kParallelGrain = 32768;  // elements per thread at least
constexpr int kMaxDims = kMaxRank;  // Note [maximum rank]

// Runs f(begin, end) over [0, n) on the OpenMP pool when n is large enough.
template <typename F> void parallel_for(int64_t n, int64_t grain, F&& f) {
  int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (n < 2 * grain || nt <= 1) {
    if (n > 0) f(int64_t(0), n);
    return;
  }
  int64_t chunks = std::min<int64_t>(nt, n / grain);
#pragma omp parallel num_threads(int(chunks))
  {
    int t = omp_get_thread_num();
    int64_t b = n * t / chunks, e = n * (t + 1) / chunks;
    if (b < e) f(b, e);
  }
}

// Operand geometry after broadcasting to the output shape and merging dims.
template <int NOps> struct Geometry {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[NOps][kMaxDims];  // bytes; innermost dim last
  char* base[NOps];
  int64_t numel = 1;
  bool contiguous = true;  // every operand dense and in the same order

  // ops[0] is the output.
  Geometry(const std::array<const Tensor*, NOps>& ops) {
    const Dims& oshape = ops[0]->shape();
    int nd = int(oshape.size());
    int64_t tmp_shape[kMaxDims];
    int64_t tmp_str[NOps][kMaxDims];
    for (int d = 0; d < nd; ++d) tmp_shape[d] = oshape[d];
    for (int k = 0; k < NOps; ++k) {
      const Tensor& t = *ops[k];
      base[k] = static_cast<char*>(t.raw_data());
      int64_t isz = int64_t(t.itemsize());
      int off = nd - int(t.dim());
      for (int d = 0; d < nd; ++d) {
        int td = d - off;
        tmp_str[k][d] = (td < 0 || t.shape()[td] == 1) ? 0 : t.strides()[td] * isz;
      }
    }
    for (int d = 0; d < nd; ++d) numel *= tmp_shape[d];
    // Drop size-1 dims, merge dims that are contiguous in every operand.
    ndim = 0;
    for (int d = 0; d < nd; ++d) {
      if (tmp_shape[d] == 1) continue;
      if (ndim > 0) {
        bool merge = true;
        for (int k = 0; k < NOps; ++k)
          if (strides[k][ndim - 1] != tmp_str[k][d] * tmp_shape[d]) { merge = false; break; }
        if (merge) {
          shape[ndim - 1] *= tmp_shape[d];
          for (int k = 0; k < NOps; ++k) strides[k][ndim - 1] = tmp_str[k][d];
          continue;
        }
      }
      shape[ndim] = tmp_shape[d];
      for (int k = 0; k < NOps; ++k) strides[k][ndim] = tmp_str[k][d];
      ++ndim;
    }
    if (ndim == 0) {  // a single element
      ndim = 1;
      shape[0] = 1;
      for (int k = 0; k < NOps; ++k) strides[k][0] = 0;
    }
    contiguous = ndim == 1;
    for (int k = 0; k < NOps && contiguous; ++k)
      contiguous = strides[k][0] == int64_t(ops[k]->itemsize()) || shape[0] == 1;
  }

  // Calls inner(ptrs, strides_of_inner_dim, n) for each run of the innermost
  // dim within linear index range [begin, end).
  template <typename Inner> void for_each_run(int64_t begin, int64_t end, Inner&& inner) const {
    int64_t idx[kMaxDims];
    int64_t rem = begin;
    for (int d = ndim - 1; d >= 0; --d) { idx[d] = rem % shape[d]; rem /= shape[d]; }
    std::array<char*, NOps> p;
    std::array<int64_t, NOps> inner_str;
    for (int k = 0; k < NOps; ++k) inner_str[k] = strides[k][ndim - 1];
    int64_t pos = begin;
    while (pos < end) {
      for (int k = 0; k < NOps; ++k) {
        char* q = base[k];
        for (int d = 0; d < ndim; ++d) q += idx[d] * strides[k][d];
        p[k] = q;
      }
      int64_t n = std::min(shape[ndim - 1] - idx[ndim - 1], end - pos);
      inner(p, inner_str, n);
      pos += n;
      idx[ndim - 1] += n;
      for (int d = ndim - 1; d > 0 && idx[d] >= shape[d]; --d) { idx[d] = 0; ++idx[d - 1]; }
    }
  }
};

namespace detail {
template <typename T> inline compute_t<T> load(const char* p) { return compute_t<T>(*reinterpret_cast<const T*>(p)); }
template <typename T, typename V> inline void store(char* p, V v) { *reinterpret_cast<T*>(p) = T(v); }
}  // namespace detail

namespace detail {
template <typename T> constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Dense float16/bfloat16 data converts per element in scalar code; in blocks
// through the vector conversions (vmath) the loop body runs on floats.
template <typename T> inline void widen_block(const T* p, float* buf, int64_t m) {
  const vmath::Table& t = vmath::table();
  if constexpr (std::is_same_v<T, bfloat16>) t.from_bf16(reinterpret_cast<const uint16_t*>(p), buf, m);
  else if constexpr (std::is_same_v<T, float16>) t.from_f16(reinterpret_cast<const uint16_t*>(p), buf, m);
  else for (int64_t k = 0; k < m; ++k) buf[k] = float(p[k]);
}
template <typename T> inline void narrow_block(const float* buf, T* p, int64_t m) {
  const vmath::Table& t = vmath::table();
  if constexpr (std::is_same_v<T, bfloat16>) t.to_bf16(buf, reinterpret_cast<uint16_t*>(p), m);
  else t.to_f16(buf, reinterpret_cast<uint16_t*>(p), m);
}

// Blocks of a dense loop in which some operands are single values (a
// scalar broadcast: x * 0.5) or 16-bit floats: each such operand is read
// through a small buffer of compute-type values (filled once for a single
// value, widened per block for 16-bit data); the rest are read in place.
template <typename T> using block_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename Out, typename... In, typename F, size_t... I>
void dense_blocks(std::index_sequence<I...>, Tensor& out, F& f, const std::array<const Tensor*, sizeof...(In)>& in) {
  constexpr int64_t kBlock = 512;
  const int64_t n = out.numel();
  const std::array<bool, sizeof...(In)> single{(in[I]->numel() == 1 && n != 1)...};
  const std::tuple<const In*...> ip{in[I]->template data<In>()...};
  Out* o = out.data<Out>();
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    std::tuple<std::array<block_t<In>, kBlock>...> bufs;
    ((single[I] ? std::get<I>(bufs).fill(block_t<In>(std::get<I>(ip)[0])) : void()), ...);
    [[maybe_unused]] float obuf[kBlock];
    for (int64_t i = b; i < e; i += kBlock) {
      const int64_t m = std::min(kBlock, e - i);
      auto src = [&](auto ic) {
        constexpr size_t K = decltype(ic)::value;
        using T = std::tuple_element_t<K, std::tuple<In...>>;
        auto& buf = std::get<K>(bufs);
        if constexpr (is_half_v<T>) {
          if (!single[K]) widen_block(std::get<K>(ip) + i, buf.data(), m);
          return static_cast<const float*>(buf.data());
        } else {
          return single[K] ? static_cast<const T*>(buf.data()) : std::get<K>(ip) + i;
        }
      };
      const std::tuple<decltype(src(std::integral_constant<size_t, I>{}))...> p{src(std::integral_constant<size_t, I>{})...};
      if constexpr (is_half_v<Out>) {
#pragma omp simd
        for (int64_t k = 0; k < m; ++k) obuf[k] = float(f(compute_t<In>(std::get<I>(p)[k])...));
        narrow_block(obuf, o + i, m);
      } else {
        Out* oi = o + i;
#pragma omp simd
        for (int64_t k = 0; k < m; ++k) oi[k] = Out(f(compute_t<In>(std::get<I>(p)[k])...));
      }
    }
  });
}

// The loop over dense operands of one shape. An output of
// vmath::stream_threshold() bytes or more is computed a block at a time into
// a buffer that streaming stores copy out (no read-for-ownership of its lines).
template <typename Out, typename... In, typename F, size_t... I>
void flat(std::index_sequence<I...>, Out* o, const std::tuple<const In*...>& ip, int64_t n, F& f) {
  if (n * int64_t(sizeof(Out)) < vmath::stream_threshold()) {
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) o[i] = Out(f(compute_t<In>(std::get<I>(ip)[i])...));
    });
    return;
  }
  const auto copy = vmath::table().copy_stream;
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    constexpr int64_t kBlock = 8192 / int64_t(sizeof(Out));
    alignas(64) Out buf[kBlock];
    for (int64_t i = b; i < e; i += kBlock) {
      const int64_t m = std::min(kBlock, e - i);
#pragma omp simd
      for (int64_t k = 0; k < m; ++k) buf[k] = Out(f(compute_t<In>(std::get<I>(ip)[i + k])...));
      copy(buf, o + i, m * int64_t(sizeof(Out)));
    }
  });
}

template <typename Out, typename... In, typename F, size_t... I>
void elementwise_impl(std::index_sequence<I...> seq, Tensor& out, F& f,
                      const std::array<const Tensor*, sizeof...(In)>& in) {
  constexpr int N = 1 + sizeof...(In);
  // Dense operands of the output's shape, or single values: the flat loop
  // (the common case, and the one where small tensors must not pay for the
  // general geometry), or blocks when a value is broadcast or 16-bit.
  if (out.is_contiguous() &&
      ((in[I]->is_contiguous() && (in[I]->shape() == out.shape() || in[I]->numel() == 1)) && ...)) {
    constexpr bool any_half = is_half_v<Out> || (is_half_v<In> || ...);
    const bool any_single = ((in[I]->numel() == 1 && out.numel() != 1) || ...);
    if (!any_half && !any_single) {
      flat<Out, In...>(seq, out.data<Out>(), std::tuple<const In*...>{in[I]->template data<In>()...}, out.numel(), f);
      return;
    }
    dense_blocks<Out, In...>(seq, out, f, in);
    return;
  }
  Geometry<N> g({&out, in[I]...});
  if (g.numel == 0) return;
  if (g.contiguous) {
    flat<Out, In...>(seq, reinterpret_cast<Out*>(g.base[0]),
                     std::tuple<const In*...>{reinterpret_cast<const In*>(g.base[I + 1])...}, g.numel, f);
    return;
  }
  parallel_for(g.numel, kParallelGrain, [&](int64_t b, int64_t e) {
    g.for_each_run(b, e, [&](const std::array<char*, N>& p, const std::array<int64_t, N>& s, int64_t n) {
      char* op = p[0];
      const int64_t os = s[0];
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(op + i * os) = Out(f(load<In>(p[I + 1] + i * s[I + 1])...));
    });
  });
}
}  // namespace detail

// out[i] = f(in0[i], in1[i], ...), computed in compute_t precision. Out and In
// are storage types; inputs broadcast to out's shape.
template <typename Out, typename... In, typename F, typename... Ts>
void elementwise(Tensor& out, F f, const Ts&... in) {
  static_assert(sizeof...(In) == sizeof...(Ts), "one storage type per input");
  detail::elementwise_impl<Out, In...>(std::index_sequence_for<In...>{}, out, f,
                                       std::array<const Tensor*, sizeof...(In)>{&in...});
}

}  // namespace oar::cpu
