#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace oar::cpu {
namespace {

// out = cast(in): every (input, output) dtype pair.
// float <-> float16/bfloat16 on dense data through the vector conversions.
template <typename In, typename Out> bool convert_16bit(const char* in, char* out, int64_t n) {
  const vmath::Table& t = vmath::table();
  auto narrow = [&](vmath::Narrow f) {
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
      f(reinterpret_cast<const float*>(in) + b, reinterpret_cast<uint16_t*>(out) + b, e - b);
    });
    return true;
  };
  auto widen = [&](vmath::Widen f) {
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
      f(reinterpret_cast<const uint16_t*>(in) + b, reinterpret_cast<float*>(out) + b, e - b);
    });
    return true;
  };
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, bfloat16>) return narrow(t.to_bf16);
  else if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float16>) return narrow(t.to_f16);
  else if constexpr (std::is_same_v<In, bfloat16> && std::is_same_v<Out, float>) return widen(t.from_bf16);
  else if constexpr (std::is_same_v<In, float16> && std::is_same_v<Out, float>) return widen(t.from_f16);
  else return false;
}

void cast_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_dtype(in[0].dtype(), [&](auto itag) {
    using In = decltype(itag);
    visit_dtype(out[0].dtype(), [&](auto otag) {
      using Out = decltype(otag);
      if constexpr (std::is_same_v<In, Out>) {
        if (in[0].is_contiguous() && out[0].is_contiguous() && in[0].shape() == out[0].shape()) {
          const char* s = static_cast<const char*>(in[0].raw_data());
          char* d = static_cast<char*>(out[0].raw_data());
          int64_t bytes = out[0].numel() * int64_t(sizeof(Out));
          parallel_for(bytes, kParallelGrain * 8, [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, size_t(e - b)); });
          return;
        }
      }
      Geometry<2> g({&out[0], &in[0]});
      if (g.numel == 0) return;
      if (g.contiguous && convert_16bit<In, Out>(g.base[1], g.base[0], g.numel)) return;
      if (g.contiguous) {  // dense: a flat loop the compiler can vectorise
        const In* ip = reinterpret_cast<const In*>(g.base[1]);
        Out* op = reinterpret_cast<Out*>(g.base[0]);
        parallel_for(g.numel, kParallelGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
          for (int64_t i = b; i < e; ++i) op[i] = convert<Out>(ip[i]);
        });
        return;
      }
      parallel_for(g.numel, kParallelGrain, [&](int64_t b, int64_t e) {
        g.for_each_run(b, e, [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
          // a strided copy whose innermost runs are dense (a transposed
          // view of attention heads): one memcpy per run
          if constexpr (std::is_same_v<In, Out>) {
            if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(In))) {
              std::memcpy(p[0], p[1], size_t(n) * sizeof(Out));
            } else {  // the bits as they are (no round trip through the compute type)
              for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], sizeof(Out));
            }
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<Out*>(p[0] + i * s[0]) = convert<Out>(*reinterpret_cast<const In*>(p[1] + i * s[1]));
        });
      });
    });
  });
}

KernelRegistrar r("cast", DeviceType::CPU, OAR_ALL_DTYPES, cast_kernel);

}  // namespace
}  // namespace oar::cpu
