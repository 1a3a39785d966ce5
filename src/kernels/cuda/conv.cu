// CUDA kernels of the convolutions (ops/conv.cpp, and fused_conv of
// ops/fused.cpp) on cuDNN's convolution API: conv is cuDNN's forward
// convolution, conv_transpose its backward-data and conv_grad_weight its
// backward-filter pass. Shapes are channel-first with 1, 2 or 3 spatial dims,
// as on the CPU (kernels/cpu/conv.cpp); the Python layer transposes the
// channel-last formats.
//
// Note [cuDNN convolutions]
// - One cuDNN handle per device, made on first use and bound to the legacy
//   default stream (Note [CUDA streams]); a handle serves one thread at a
//   time, so each call holds the device's lock. Handles live until the
//   process exits (destroying them from a static destructor would race the
//   CUDA runtime's own teardown).
// - 1-D convolutions run as 2-D ones of height 1 (cuDNN has no 1-D form).
// - cuDNN pads both sides of a dim alike. Where pads_l and pads_r differ,
//   the input (conv, conv_grad_weight) is copied into a buffer holding the
//   difference as zeros, or the input gradient (conv_transpose) is computed
//   into such a buffer and cropped; cuDNN then pads by the smaller side.
// - float32 runs with CUDNN_FMA_MATH: no TF32 tensor cores, whose 10-bit
//   mantissas would miss the CPU's float32 results by far more than the
//   float32 tolerance. float16 and bfloat16 use tensor cores and accumulate
//   in float32 (the CPU computes them in float32 and rounds once: the same
//   result up to the order of the sums). float64 runs in float64.
// - The algorithm is measured: cuDNN's Find queries run each candidate once
//   on the problem's shapes (the first call of a shape pays for it) and rank
//   them by time; the first that cuDNN accepts and whose workspace can be
//   allocated (at most 1 GiB where one fits) is remembered per problem.
//   Should cuDNN accept none, the direct kernels below run instead (one
//   thread per output element, in the CPU's gather form): slow but general.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"
#include "ops/ops.h"
#include "tensor/autograd_meta.h"

namespace oar::cuda {
namespace {

enum class Kind { Fwd, BwdData, BwdFilter };

const char* api_of(Kind k) {
  return k == Kind::Fwd ? "oar.conv" : k == Kind::BwdData ? "oar.conv_transpose" : "oar.conv_grad_weight";
}

void cudnn_check(cudnnStatus_t s, const char* api, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) fail(ErrorKind::Runtime, "[", api, "] ", what, " failed: ", cudnnGetErrorString(s));
}

// ------------------------------------------------------------------ handles

struct HandleSlot {
  std::mutex mu;
  cudnnHandle_t h = nullptr;
};

HandleSlot& slot_for(int device) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<HandleSlot>> slots;
  std::lock_guard<std::mutex> l(mu);
  if (slots.size() <= size_t(device)) slots.resize(size_t(device) + 1);
  if (!slots[size_t(device)]) slots[size_t(device)] = std::make_unique<HandleSlot>();
  return *slots[size_t(device)];
}

// The device's handle, held for the lifetime of this object
// (Note [cuDNN convolutions]); the device is current meanwhile.
class Handle {
 public:
  Handle(int device, const char* api) : guard_(device), slot_(slot_for(device)), lock_(slot_.mu) {
    if (!slot_.h) {
      cudnn_check(cudnnCreate(&slot_.h), api, "cudnnCreate");
      cudnn_check(cudnnSetStream(slot_.h, cudaStreamLegacy), api, "cudnnSetStream");
    }
  }
  cudnnHandle_t get() const { return slot_.h; }

 private:
  DeviceGuard guard_;
  HandleSlot& slot_;
  std::lock_guard<std::mutex> lock_;
};

// ------------------------------------------------------------- descriptors

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc(const std::vector<int>& dims, cudnnDataType_t dt, const char* api) {
    cudnn_check(cudnnCreateTensorDescriptor(&d), api, "cudnnCreateTensorDescriptor");
    std::vector<int> st(dims.size());
    int64_t s = 1;
    for (size_t k = dims.size(); k-- > 0;) {
      st[k] = int(s);
      s *= dims[k];
    }
    cudnn_check(cudnnSetTensorNdDescriptor(d, dt, int(dims.size()), dims.data(), st.data()), api,
                "cudnnSetTensorNdDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc(const std::vector<int>& dims, cudnnDataType_t dt, const char* api) {
    cudnn_check(cudnnCreateFilterDescriptor(&d), api, "cudnnCreateFilterDescriptor");
    cudnn_check(cudnnSetFilterNdDescriptor(d, dt, CUDNN_TENSOR_NCHW, int(dims.size()), dims.data()), api,
                "cudnnSetFilterNdDescriptor");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc(const std::vector<int>& pad, const std::vector<int>& stride, const std::vector<int>& dil, int groups,
           cudnnDataType_t compute, const char* api) {
    cudnn_check(cudnnCreateConvolutionDescriptor(&d), api, "cudnnCreateConvolutionDescriptor");
    cudnn_check(cudnnSetConvolutionNdDescriptor(d, int(pad.size()), pad.data(), stride.data(), dil.data(),
                                                CUDNN_CROSS_CORRELATION, compute),
                api, "cudnnSetConvolutionNdDescriptor");
    cudnn_check(cudnnSetConvolutionGroupCount(d, groups), api, "cudnnSetConvolutionGroupCount");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

// --------------------------------------------------------------- problems

// One convolution in cuDNN's terms: dims of x, w and y with 2 or 3 spatial
// dims, symmetric padding. Data pointers are in the forward roles.
struct Problem {
  Kind kind;
  DType dt;
  int device;
  std::vector<int> x, w, y, pad, stride, dil;
  int groups;

  std::string key() const {
    std::string k = std::to_string(int(kind)) + ":" + std::to_string(int(dt)) + ":" + std::to_string(device) + ":" +
                    std::to_string(groups);
    for (const std::vector<int>* v : {&x, &w, &y, &pad, &stride, &dil}) {
      k += '|';
      for (int e : *v) k += std::to_string(e) + ",";
    }
    return k;
  }
};

int to_int(int64_t v, const char* api) {
  OAR_CHECK(v <= INT32_MAX, Value, "[", api, "] size ", v, " is too large for cuDNN");
  return int(v);
}

// The algorithm chosen per problem: cuDNN's enum value and math type.
struct Choice {
  int algo;
  cudnnMathType_t math;
};
std::mutex g_choice_mu;
std::map<std::string, Choice>& choices() {
  static std::map<std::string, Choice> m;
  return m;
}

// Candidates for the problem's kind, ranked by cuDNN's measured times.
std::vector<Choice> candidates(cudnnHandle_t h, const Problem& pb, const TensorDesc& xd, const FilterDesc& wd,
                               const ConvDesc& cd, const TensorDesc& yd) {
  const char* api = api_of(pb.kind);
  std::vector<Choice> out;
  int max = 0, got = 0;
  auto keep = [&](const auto& perf) {
    for (int k = 0; k < got; ++k)
      if (perf[size_t(k)].status == CUDNN_STATUS_SUCCESS) out.push_back({int(perf[size_t(k)].algo), perf[size_t(k)].mathType});
  };
  if (pb.kind == Kind::Fwd) {
    cudnn_check(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max), api, "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max));
    cudnn_check(cudnnFindConvolutionForwardAlgorithm(h, xd.d, wd.d, cd.d, yd.d, max, &got, perf.data()), api,
                "cudnnFindConvolutionForwardAlgorithm");
    keep(perf);
  } else if (pb.kind == Kind::BwdData) {
    cudnn_check(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max), api,
                "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(max));
    cudnn_check(cudnnFindConvolutionBackwardDataAlgorithm(h, wd.d, yd.d, cd.d, xd.d, max, &got, perf.data()), api,
                "cudnnFindConvolutionBackwardDataAlgorithm");
    keep(perf);
  } else {
    cudnn_check(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max), api,
                "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(max));
    cudnn_check(cudnnFindConvolutionBackwardFilterAlgorithm(h, xd.d, yd.d, cd.d, wd.d, max, &got, perf.data()),
                api, "cudnnFindConvolutionBackwardFilterAlgorithm");
    keep(perf);
  }
  return out;
}

// The math type a candidate runs with (Note [cuDNN convolutions]): float32
// never takes tensor cores, float64 has none to take.
cudnnMathType_t math_for(DType dt, cudnnMathType_t suggested) {
  if (dt == DType::Float32) return CUDNN_FMA_MATH;
  if (dt == DType::Float64) return CUDNN_DEFAULT_MATH;
  return suggested;
}

// Runs the problem with one algorithm; false where cuDNN refuses it, or its
// workspace exceeds max_bytes or cannot be had.
bool try_algo(cudnnHandle_t h, const Problem& pb, const Choice& c, const TensorDesc& xd, const FilterDesc& wd,
              const ConvDesc& cd, const TensorDesc& yd, void* x, void* w, void* y, size_t max_bytes) {
  if (cudnnSetConvolutionMathType(cd.d, c.math) != CUDNN_STATUS_SUCCESS) return false;
  size_t bytes = 0;
  cudnnStatus_t s;
  if (pb.kind == Kind::Fwd)
    s = cudnnGetConvolutionForwardWorkspaceSize(h, xd.d, wd.d, cd.d, yd.d, cudnnConvolutionFwdAlgo_t(c.algo), &bytes);
  else if (pb.kind == Kind::BwdData)
    s = cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd.d, yd.d, cd.d, xd.d, cudnnConvolutionBwdDataAlgo_t(c.algo),
                                                     &bytes);
  else
    s = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd.d, yd.d, cd.d, wd.d,
                                                       cudnnConvolutionBwdFilterAlgo_t(c.algo), &bytes);
  if (s != CUDNN_STATUS_SUCCESS || bytes > max_bytes) return false;
  Tensor ws;
  if (bytes > 0) {
    try {
      ws = empty_tensor(Dims{int64_t(bytes)}, DType::UInt8, Device{DeviceType::CUDA, int16_t(pb.device)});
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Memory) throw;
      return false;
    }
  }
  void* wsp = bytes > 0 ? ws.raw_data() : nullptr;
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const void* one = pb.dt == DType::Float64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = pb.dt == DType::Float64 ? static_cast<const void*>(&zero_d) : &zero_f;
  if (pb.kind == Kind::Fwd)
    s = cudnnConvolutionForward(h, one, xd.d, x, wd.d, w, cd.d, cudnnConvolutionFwdAlgo_t(c.algo), wsp, bytes, zero,
                                yd.d, y);
  else if (pb.kind == Kind::BwdData)
    s = cudnnConvolutionBackwardData(h, one, wd.d, w, yd.d, y, cd.d, cudnnConvolutionBwdDataAlgo_t(c.algo), wsp, bytes,
                                     zero, xd.d, x);
  else
    s = cudnnConvolutionBackwardFilter(h, one, xd.d, x, yd.d, y, cd.d, cudnnConvolutionBwdFilterAlgo_t(c.algo), wsp,
                                       bytes, zero, wd.d, w);
  return s == CUDNN_STATUS_SUCCESS;
}

// Runs pb on cuDNN; false where cuDNN takes none of its algorithms.
bool run_cudnn(const Problem& pb, void* x, void* w, void* y) {
  const char* api = api_of(pb.kind);
  Handle h(pb.device, api);
  const cudnnDataType_t dt = cudnn_type(pb.dt);
  TensorDesc xd(pb.x, dt, api), yd(pb.y, dt, api);
  FilterDesc wd(pb.w, dt, api);
  ConvDesc cd(pb.pad, pb.stride, pb.dil, pb.groups, pb.dt == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
              api);
  // The heuristics rank algorithms for the math type the descriptor holds.
  cudnn_check(cudnnSetConvolutionMathType(cd.d, math_for(pb.dt, CUDNN_TENSOR_OP_MATH)), api,
              "cudnnSetConvolutionMathType");
  const std::string key = pb.key();
  std::optional<Choice> known;
  {
    std::lock_guard<std::mutex> l(g_choice_mu);
    auto it = choices().find(key);
    if (it != choices().end()) known = it->second;
  }
  constexpr size_t kAny = SIZE_MAX;
  if (known && try_algo(h.get(), pb, *known, xd, wd, cd, yd, x, w, y, kAny)) return true;
  // In cuDNN's order, those with a workspace of at most 1 GiB first.
  const std::vector<Choice> list = candidates(h.get(), pb, xd, wd, cd, yd);
  for (size_t cap : {size_t(1) << 30, kAny}) {
    for (Choice c : list) {
      c.math = math_for(pb.dt, c.math);
      if (try_algo(h.get(), pb, c, xd, wd, cd, yd, x, w, y, cap)) {
        std::lock_guard<std::mutex> l(g_choice_mu);
        choices()[key] = c;
        return true;
      }
    }
  }
  return false;
}

// ------------------------------------------------------- padding buffers

// An (N*C, *spatial) tensor and its copy with lo/hi extra zeros per spatial
// dim, three spatial dims (leading ones of size 1).
struct PadGeo {
  int64_t planes;
  int64_t small[3], big[3], lo[3];
};

// pad: dst (big) from src (small), zeros outside; crop: dst (small) from src (big).
template <typename U> __global__ void pad_kernel(const U* src, U* dst, PadGeo g, bool pad) {
  const int64_t* dims = pad ? g.big : g.small;
  const int64_t n = g.planes * dims[0] * dims[1] * dims[2];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i, c[3];
    for (int d = 2; d >= 0; --d) {
      c[d] = r % dims[d];
      r /= dims[d];
    }
    if (pad) {
      bool inside = true;
      int64_t off = r;
      for (int d = 0; d < 3; ++d) {
        const int64_t j = c[d] - g.lo[d];
        inside = inside && j >= 0 && j < g.small[d];
        off = off * g.small[d] + j;
      }
      dst[i] = inside ? src[off] : U(0);
    } else {
      int64_t off = r;
      for (int d = 0; d < 3; ++d) off = off * g.big[d] + c[d] + g.lo[d];
      dst[i] = src[off];
    }
  }
}

void pad_copy(const Tensor& src, const Tensor& dst, const PadGeo& g, bool pad) {
  const int64_t n = dst.numel();  // the kernel runs over dst
  if (n == 0) return;
  switch (src.itemsize()) {
    case 2:
      pad_kernel<<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(src.data<uint16_t>(), dst.data<uint16_t>(), g, pad);
      break;
    case 4:
      pad_kernel<<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(src.data<uint32_t>(), dst.data<uint32_t>(), g, pad);
      break;
    default:
      pad_kernel<<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(src.data<uint64_t>(), dst.data<uint64_t>(), g, pad);
  }
  cuda_check(cudaGetLastError(), "oar.conv", "kernel launch");
}

// --------------------------------------------------------- direct kernels

// Geometry padded to three spatial dims, as kernels/cpu/conv.cpp's Geo.
struct Geo {
  int64_t N, C, O, G, Cg, Og;
  int64_t i[3], o[3], k[3], s[3], p[3], d[3];
  __host__ __device__ int64_t isz() const { return i[0] * i[1] * i[2]; }
  __host__ __device__ int64_t osz() const { return o[0] * o[1] * o[2]; }
  __host__ __device__ int64_t ksz() const { return k[0] * k[1] * k[2]; }
};

Geo make_geo(const Dims& xs, const Dims& ws, const Dims& ys, const Attrs& a) {
  Geo g;
  g.N = xs[0];
  g.C = xs[1];
  g.O = ws[0];
  g.G = a.i(4);
  g.Cg = g.C / g.G;
  g.Og = g.O / g.G;
  const int nsp = int(xs.size()) - 2, off = 3 - nsp;
  for (int j = 0; j < 3; ++j) {
    g.i[j] = g.o[j] = g.k[j] = g.s[j] = g.d[j] = 1;
    g.p[j] = 0;
  }
  for (int j = 0; j < nsp; ++j) {
    g.i[off + j] = xs[2 + size_t(j)];
    g.o[off + j] = ys[2 + size_t(j)];
    g.k[off + j] = ws[2 + size_t(j)];
    g.s[off + j] = a.ints(0)[size_t(j)];
    g.p[off + j] = a.ints(1)[size_t(j)];
    g.d[off + j] = a.ints(3)[size_t(j)];
  }
  return g;
}

// Accumulation type: float for the 16-bit floats and float32, double for float64.
template <typename T> using acc_t = value_t<T>;

template <typename T> __device__ __forceinline__ acc_t<T> get(const T* p, int64_t i) {
  return load<T>(reinterpret_cast<const char*>(p + i));
}
template <typename T> __device__ __forceinline__ void put(T* p, int64_t i, acc_t<T> v) {
  store<T>(reinterpret_cast<char*>(p + i), v);
}

template <typename T> __global__ void conv_fwd_direct(Geo g, const T* x, const T* w, T* y) {
  const int64_t n_out = g.N * g.O * g.osz();
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n_out; e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e;
    const int64_t a2 = r % g.o[2]; r /= g.o[2];
    const int64_t a1 = r % g.o[1]; r /= g.o[1];
    const int64_t a0 = r % g.o[0]; r /= g.o[0];
    const int64_t oc = r % g.O, n = r / g.O, grp = oc / g.Og;
    acc_t<T> acc = 0;
    for (int64_t ic = 0; ic < g.Cg; ++ic) {
      const int64_t xb = (n * g.C + grp * g.Cg + ic) * g.isz(), wb = (oc * g.Cg + ic) * g.ksz();
      for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
        const int64_t j0 = a0 * g.s[0] - g.p[0] + k0 * g.d[0];
        if (j0 < 0 || j0 >= g.i[0]) continue;
        for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
          const int64_t j1 = a1 * g.s[1] - g.p[1] + k1 * g.d[1];
          if (j1 < 0 || j1 >= g.i[1]) continue;
          for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
            const int64_t j2 = a2 * g.s[2] - g.p[2] + k2 * g.d[2];
            if (j2 < 0 || j2 >= g.i[2]) continue;
            acc += get(x, xb + (j0 * g.i[1] + j1) * g.i[2] + j2) * get(w, wb + (k0 * g.k[1] + k1) * g.k[2] + k2);
          }
        }
      }
    }
    put(y, e, acc);
  }
}

// Output index along one dim reached from input j with tap k, or -1.
__device__ __forceinline__ int64_t src_of(int64_t j, int64_t k, int64_t s, int64_t p, int64_t d, int64_t osz) {
  int64_t t = j + p - k * d;
  if (t < 0 || t % s) return -1;
  t /= s;
  return t < osz ? t : -1;
}

template <typename T> __global__ void conv_bwd_data_direct(Geo g, const T* gy, const T* w, T* gx) {
  const int64_t n_in = g.N * g.C * g.isz();
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n_in; e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e;
    const int64_t j2 = r % g.i[2]; r /= g.i[2];
    const int64_t j1 = r % g.i[1]; r /= g.i[1];
    const int64_t j0 = r % g.i[0]; r /= g.i[0];
    const int64_t c = r % g.C, n = r / g.C, grp = c / g.Cg, ic = c % g.Cg;
    acc_t<T> acc = 0;
    for (int64_t oc = grp * g.Og; oc < (grp + 1) * g.Og; ++oc) {
      const int64_t yb = (n * g.O + oc) * g.osz(), wb = (oc * g.Cg + ic) * g.ksz();
      for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
        const int64_t a0 = src_of(j0, k0, g.s[0], g.p[0], g.d[0], g.o[0]);
        if (a0 < 0) continue;
        for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
          const int64_t a1 = src_of(j1, k1, g.s[1], g.p[1], g.d[1], g.o[1]);
          if (a1 < 0) continue;
          for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
            const int64_t a2 = src_of(j2, k2, g.s[2], g.p[2], g.d[2], g.o[2]);
            if (a2 < 0) continue;
            acc += get(gy, yb + (a0 * g.o[1] + a1) * g.o[2] + a2) * get(w, wb + (k0 * g.k[1] + k1) * g.k[2] + k2);
          }
        }
      }
    }
    put(gx, e, acc);
  }
}

template <typename T> __global__ void conv_bwd_filter_direct(Geo g, const T* x, const T* gy, T* gw) {
  const int64_t n_w = g.O * g.Cg * g.ksz();
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n_w; e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e;
    const int64_t k2 = r % g.k[2]; r /= g.k[2];
    const int64_t k1 = r % g.k[1]; r /= g.k[1];
    const int64_t k0 = r % g.k[0]; r /= g.k[0];
    const int64_t ic = r % g.Cg, oc = r / g.Cg, c = (oc / g.Og) * g.Cg + ic;
    acc_t<T> acc = 0;
    for (int64_t n = 0; n < g.N; ++n) {
      const int64_t xb = (n * g.C + c) * g.isz(), yb = (n * g.O + oc) * g.osz();
      for (int64_t a0 = 0; a0 < g.o[0]; ++a0) {
        const int64_t j0 = a0 * g.s[0] - g.p[0] + k0 * g.d[0];
        if (j0 < 0 || j0 >= g.i[0]) continue;
        for (int64_t a1 = 0; a1 < g.o[1]; ++a1) {
          const int64_t j1 = a1 * g.s[1] - g.p[1] + k1 * g.d[1];
          if (j1 < 0 || j1 >= g.i[1]) continue;
          for (int64_t a2 = 0; a2 < g.o[2]; ++a2) {
            const int64_t j2 = a2 * g.s[2] - g.p[2] + k2 * g.d[2];
            if (j2 < 0 || j2 >= g.i[2]) continue;
            acc += get(x, xb + (j0 * g.i[1] + j1) * g.i[2] + j2) * get(gy, yb + (a0 * g.o[1] + a1) * g.o[2] + a2);
          }
        }
      }
    }
    put(gw, e, acc);
  }
}

void run_direct(Kind kind, const Tensor& x, const Tensor& w, const Tensor& y, const Attrs& a) {
  const Geo g = make_geo(x.shape(), w.shape(), y.shape(), a);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (kind == Kind::Fwd)
      conv_fwd_direct<T><<<blocks_for(y.numel()), kThreads, 0, cudaStreamLegacy>>>(g, x.data<T>(), w.data<T>(),
                                                                                   y.data<T>());
    else if (kind == Kind::BwdData)
      conv_bwd_data_direct<T><<<blocks_for(x.numel()), kThreads, 0, cudaStreamLegacy>>>(g, y.data<T>(), w.data<T>(),
                                                                                        x.data<T>());
    else
      conv_bwd_filter_direct<T><<<blocks_for(w.numel()), kThreads, 0, cudaStreamLegacy>>>(g, x.data<T>(), y.data<T>(),
                                                                                          w.data<T>());
  });
  cuda_check(cudaGetLastError(), api_of(kind), "kernel launch");
}

// ------------------------------------------------------------- the kernels

// Runs `kind` on dense tensors in the forward roles (x, w, y); the one that
// `kind` computes is written (Note [cuDNN convolutions]).
void run_conv(Kind kind, const Tensor& x, const Tensor& w, const Tensor& y, const Attrs& a) {
  const char* api = api_of(kind);
  const Dims &xs = x.shape(), &ws = w.shape(), &ys = y.shape();
  const size_t nsp = xs.size() - 2;
  const Dims &st = a.ints(0), &pl = a.ints(1), &pr = a.ints(2), &dl = a.ints(3);
  Problem pb;
  pb.kind = kind;
  pb.dt = x.dtype();
  pb.device = x.device().index;
  pb.groups = to_int(a.i(4), api);
  // The padded input's geometry where the two sides differ.
  PadGeo pg{xs[0] * xs[1], {1, 1, 1}, {1, 1, 1}, {0, 0, 0}};
  bool extra = false;
  Dims big{xs[0], xs[1]};
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t common = std::min(pl[j], pr[j]), add = pl[j] + pr[j] - 2 * common;
    const size_t d = 3 - nsp + j;
    pg.small[d] = xs[2 + j];
    pg.big[d] = xs[2 + j] + add;
    pg.lo[d] = pl[j] - common;
    extra = extra || add > 0;
    big.push_back(xs[2 + j] + add);
    pb.pad.push_back(to_int(common, api));
    pb.stride.push_back(to_int(st[j], api));
    pb.dil.push_back(to_int(dl[j], api));
  }
  for (int64_t v : extra ? big : xs) pb.x.push_back(to_int(v, api));
  for (int64_t v : ws) pb.w.push_back(to_int(v, api));
  for (int64_t v : ys) pb.y.push_back(to_int(v, api));
  if (nsp == 1) {  // 1-D as 2-D of height 1
    for (std::vector<int>* v : {&pb.x, &pb.w, &pb.y}) v->insert(v->begin() + 2, 1);
    pb.pad.insert(pb.pad.begin(), 0);
    pb.stride.insert(pb.stride.begin(), 1);
    pb.dil.insert(pb.dil.begin(), 1);
  }
  DeviceGuard guard(pb.device);
  Tensor xp = x;
  if (extra) {
    xp = empty_tensor(big, x.dtype(), x.device());
    if (kind != Kind::BwdData) pad_copy(x, xp, pg, true);
  }
  if (run_cudnn(pb, xp.raw_data(), w.raw_data(), y.raw_data())) {
    if (extra && kind == Kind::BwdData) pad_copy(xp, x, pg, false);
    return;
  }
  run_direct(kind, x, w, y, a);
}

Tensor dense(const Tensor& t) {
  if (!t.defined() || t.is_contiguous()) return t;
  NoGradGuard ng;
  return ops::contiguous(t);
}

void zero_fill(const Tensor& t) {
  if (t.numel() == 0) return;
  DeviceGuard guard(t.device().index);
  cuda_check(cudaMemsetAsync(t.raw_data(), 0, size_t(t.numel()) * t.itemsize(), cudaStreamLegacy), "oar.conv",
             "cudaMemsetAsync");
}

bool empty_any(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->numel() == 0) return true;
  return false;
}

void conv_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0]), w = dense(in[1]);
  Tensor& y = out[0];
  if (empty_any({&x, &w, &y})) return zero_fill(y);
  run_conv(Kind::Fwd, x, w, y, a);
}

void conv_transpose_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor gy = dense(in[0]), w = dense(in[1]);
  Tensor& gx = out[0];
  if (empty_any({&gy, &w, &gx})) return zero_fill(gx);
  run_conv(Kind::BwdData, gx, w, gy, a);
}

void conv_grad_weight_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0]), gy = dense(in[1]);
  Tensor& gw = out[0];
  if (empty_any({&x, &gy, &gw})) return zero_fill(gw);
  run_conv(Kind::BwdFilter, x, gw, gy, a);
}

#define OAR_CONV_DTYPES { DType::Float16, DType::BFloat16, DType::Float32, DType::Float64 }
const bool conv_reg = register_real("conv", conv_kernel, OAR_CONV_DTYPES);
const bool conv_transpose_reg = register_real("conv_transpose", conv_transpose_kernel, OAR_CONV_DTYPES);
const bool conv_grad_weight_reg = register_real("conv_grad_weight", conv_grad_weight_kernel, OAR_CONV_DTYPES);

// --------------------------------------------------------------- fused_conv

// act(conv(x, w) + bias + residual): the convolution on cuDNN, then one
// elementwise pass for the rest (in float, as the CPU's oneDNN post-ops:
// the bias, then the residual, then the activation).
enum class Act { None, Relu, Gelu, GeluTanh, Silu, Sigmoid, Tanh, Clip };

Act act_of(const std::string& s) {
  if (s.empty()) return Act::None;
  if (s == "relu") return Act::Relu;
  if (s == "gelu") return Act::Gelu;
  if (s == "gelu_tanh") return Act::GeluTanh;
  if (s == "silu") return Act::Silu;
  if (s == "sigmoid") return Act::Sigmoid;
  if (s == "tanh") return Act::Tanh;
  if (s == "clip") return Act::Clip;
  fail(ErrorKind::Runtime, "[oar.fused_conv] internal: no activation '", s, "'");
}

__device__ __forceinline__ float activate(float x, Act act, float lo, float hi) {
  switch (act) {
    case Act::Relu: return x < 0.0f ? 0.0f : x;
    case Act::Gelu: return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    case Act::GeluTanh: {
      const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + tanhf(u));
    }
    case Act::Silu: return x / (1.0f + expf(-x));
    case Act::Sigmoid: return 1.0f / (1.0f + expf(-x));
    case Act::Tanh: return tanhf(x);
    case Act::Clip: return x < lo ? lo : (x > hi ? hi : x);
    default: return x;
  }
}

// y (N, O, *spatial) dense; bias one value per channel (or null); res like y (or null).
template <typename T>
__global__ void epilogue_kernel(T* y, const T* bias, const T* res, int64_t n, int64_t inner, int64_t channels,
                                Act act, float lo, float hi) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = get(y, i);
    if (bias) v += get(bias, (i / inner) % channels);
    if (res) v += get(res, i);
    put(y, i, activate(v, act, lo, hi));
  }
}

void fused_conv_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0]), w = dense(in[1]), b = dense(in[2]), r = dense(in[3]);
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  const std::string& act_name = a.s(6);
  const Act act = act_of(act_name);
  if (x.numel() == 0 || w.numel() == 0) {  // an empty sum: the output is act(bias + residual)
    if (act != Act::None && act != Act::Clip)
      fail(ErrorKind::NotImplemented, "[oar.fused_conv] an empty input with activation '", act_name, "'");
    zero_fill(y);
  } else {
    run_conv(Kind::Fwd, x, w, y, a);
  }
  if (!b.defined() && !r.defined() && act == Act::None) return;
  const int64_t n = y.numel(), channels = y.shape()[1], inner = n / (y.shape()[0] * channels);
  const float lo = float(a.f(7)), hi = float(a.f(8));
  DeviceGuard guard(y.device().index);
  if (y.dtype() == DType::BFloat16)
    epilogue_kernel<bfloat16><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(
        y.data<bfloat16>(), b.defined() ? b.data<bfloat16>() : nullptr, r.defined() ? r.data<bfloat16>() : nullptr, n,
        inner, channels, act, lo, hi);
  else
    epilogue_kernel<float><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(
        y.data<float>(), b.defined() ? b.data<float>() : nullptr, r.defined() ? r.data<float>() : nullptr, n, inner,
        channels, act, lo, hi);
  cuda_check(cudaGetLastError(), "oar.fused_conv", "kernel launch");
}

const bool fused_conv_reg = register_real("fused_conv", fused_conv_kernel, {DType::Float32, DType::BFloat16});

}  // namespace
}  // namespace oar::cuda
