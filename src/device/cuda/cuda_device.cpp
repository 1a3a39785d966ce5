// The CUDA device: a caching allocator over cudaMalloc and the copies, behind
// DeviceInterface. It lives in liboar_cuda.so, which Python loads on first use
// (oar/device/cuda.py); loading it registers the device. Built only when the
// CUDA toolkit is found.
//
// Note [CUDA streams]
// Everything oar enqueues runs on the legacy default stream of the device
// (copies here, kernels in kernels/cuda), so it is ordered without events.
// Only collectives use a stream of their own (dist/nccl_group.cpp); they
// order themselves against the default stream with events.
#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "base/error.h"
#include "device/cuda/cuda_check.h"
#include "tensor/device.h"

namespace oar {
namespace {

// Size classes as in the CPU allocator (Note [CPU block sizes]), from 512 B:
// cudaMalloc aligns to 256 B at least, and small blocks are rare on a GPU.
size_t size_class(size_t n, int* cls) { return allocator_size_class(n, 512, 512, cls); }

class CudaDevice final : public DeviceInterface {
 public:
  DeviceType type() const override { return DeviceType::CUDA; }

  int device_count() const override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: not an error to keep
      return 0;
    }
    return n;
  }

  void* allocate(size_t nbytes, int index) override {
    int cls;
    size_t sz = size_class(nbytes == 0 ? 1 : nbytes, &cls);
    PerDevice& d = dev(index);
    {
      std::lock_guard<std::mutex> g(d.mu);
      if (size_t(cls) >= d.bins.size()) d.bins.resize(cls + 1);
      d.bins[cls].size = sz;
      d.stats.allocated += sz;
      if (d.stats.allocated > d.stats.max_allocated) d.stats.max_allocated = d.stats.allocated;
      auto& fl = d.bins[cls].blocks;
      if (!fl.empty()) {
        void* p = fl.back();
        fl.pop_back();
        return p;
      }
      d.stats.reserved += sz;
      if (d.stats.reserved > d.stats.max_reserved) d.stats.max_reserved = d.stats.reserved;
    }
    DeviceGuard guard(index);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, sz);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      empty_cache(index);
      e = cudaMalloc(&p, sz);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      std::lock_guard<std::mutex> g(d.mu);
      d.stats.allocated -= sz;
      d.stats.reserved -= sz;
      fail(ErrorKind::Runtime, "[oar] could not allocate ", nbytes, " bytes on gpu:", index, ": ",
           cudaGetErrorString(e));
    }
    return p;
  }

  void deallocate(void* p, size_t nbytes, int index) override {
    if (!p) return;
    int cls;
    size_t sz = size_class(nbytes == 0 ? 1 : nbytes, &cls);
    PerDevice& d = dev(index);
    std::lock_guard<std::mutex> g(d.mu);
    d.stats.allocated -= sz;
    // Work on the default stream may still read the block; the next user of
    // the block enqueues on the same stream, so reuse is ordered after it.
    d.bins[cls].blocks.push_back(p);
  }

  void copy_to_host(void* dst, const void* src, size_t n, int index) override {
    DeviceGuard guard(index);
    cuda_check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "oar.Tensor.cpu", "cudaMemcpy");
  }
  void copy_from_host(void* dst, const void* src, size_t n, int index) override {
    DeviceGuard guard(index);
    cuda_check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "oar.Tensor.cuda", "cudaMemcpy");
  }
  void copy_on_device(void* dst, const void* src, size_t n, int index) override {
    DeviceGuard guard(index);
    cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, cudaStreamLegacy), "oar.Tensor.copy_",
               "cudaMemcpyAsync");
  }
  void synchronize(int index) override {
    DeviceGuard guard(index);
    cuda_check(cudaDeviceSynchronize(), "oar.device.synchronize", "cudaDeviceSynchronize");
  }

  MemoryStats memory_stats(int index) const override {
    PerDevice& d = const_cast<CudaDevice*>(this)->dev(index);
    std::lock_guard<std::mutex> g(d.mu);
    return d.stats;
  }
  void reset_peak_stats(int index) override {
    PerDevice& d = dev(index);
    std::lock_guard<std::mutex> g(d.mu);
    d.stats.max_allocated = d.stats.allocated;
  }
  void reset_peak_reserved(int index) override {
    PerDevice& d = dev(index);
    std::lock_guard<std::mutex> g(d.mu);
    d.stats.max_reserved = d.stats.reserved;
  }
  void empty_cache(int index) override {
    PerDevice& d = dev(index);
    DeviceGuard guard(index);
    // Nothing queued may still use a block.
    cuda_check(cudaDeviceSynchronize(), "oar.device.cuda.empty_cache", "cudaDeviceSynchronize");
    std::lock_guard<std::mutex> g(d.mu);
    for (Bin& bin : d.bins) {
      for (void* p : bin.blocks) cudaFree(p);
      d.stats.reserved -= int64_t(bin.size * bin.blocks.size());
      bin.blocks.clear();
    }
  }

 private:
  struct Bin {
    size_t size = 0;
    std::vector<void*> blocks;
  };
  struct PerDevice {
    std::mutex mu;
    std::vector<Bin> bins;
    MemoryStats stats;
  };

  // Checked before any statistic changes, so a bad index leaves them intact.
  PerDevice& dev(int index) {
    std::call_once(init_, [this] {
      count_ = device_count();
      devices_ = std::vector<PerDevice>(size_t(count_));
    });
    OAR_CHECK(index >= 0 && index < count_, Value, "[oar] gpu:", index, " does not exist: ", count_,
              " CUDA device(s) are visible");
    return devices_[size_t(index)];
  }

  std::once_flag init_;
  int count_ = 0;
  std::vector<PerDevice> devices_;
};

// Never destroyed, like the CPU device: tensors may outlive static destructors.
const bool kRegistered = [] {
  register_device(DeviceType::CUDA, new CudaDevice);
  return true;
}();

}  // namespace
}  // namespace oar
