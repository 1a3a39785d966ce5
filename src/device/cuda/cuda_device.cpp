// The CUDA device: the caching allocator over cudaMalloc (Note [caching
// allocator]), copies, streams and events, behind DeviceInterface. It lives
// in liboar_cuda.so, which Python loads on first use (oar/device/cuda.py);
// loading it registers the device. Built only when the CUDA toolkit is found.
//
// Note [CUDA streams]
// Copies and kernels run on the current stream of their device
// (set_current_stream; oar.device.stream_guard), the legacy default stream
// unless one is set. The legacy default stream waits for, and is waited for
// by, every other blocking stream, so work on it is ordered without events.
// Collectives use a stream of their own (dist/nccl_group.cpp) and order
// themselves against the default stream with events.
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "device/cuda/cuda_check.h"
#include "tensor/caching_allocator.h"

namespace oar {
namespace {

cudaStream_t as_stream(void* s) { return s ? static_cast<cudaStream_t>(s) : cudaStreamLegacy; }

struct CudaMemory final : CachingAllocator::Backend {
  int index = 0;
  void* raw_allocate(size_t sz) override {
    DeviceGuard guard(index);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, sz);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    cuda_check(e, "oar", "cudaMalloc");
    return p;
  }
  void raw_free(void* p, size_t) override { cudaFree(p); }
  void before_release() override {
    // Nothing queued may still use a block.
    DeviceGuard guard(index);
    cuda_check(cudaDeviceSynchronize(), "oar.device.cuda.empty_cache", "cudaDeviceSynchronize");
  }
};

// A cudaEvent, with whether it was created for timing.
struct CudaEvent {
  cudaEvent_t ev = nullptr;
  bool recorded = false;
};

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

  void* allocate(size_t nbytes, int index) override { return dev(index).alloc.allocate(nbytes); }
  // Work on the stream may still read the block; the next user of the block
  // enqueues on the same stream, so reuse is ordered after it.
  void deallocate(void* p, size_t nbytes, int index) override { dev(index).alloc.deallocate(p, nbytes); }

  void copy_to_host(void* dst, const void* src, size_t n, int index) override {
    DeviceGuard guard(index);
    cudaStream_t s = as_stream(current_stream(Device{DeviceType::CUDA, int16_t(index)}));
    cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s), "oar.Tensor.cpu", "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(s), "oar.Tensor.cpu", "cudaStreamSynchronize");
  }
  void copy_from_host(void* dst, const void* src, size_t n, int index) override {
    DeviceGuard guard(index);
    cudaStream_t s = as_stream(current_stream(Device{DeviceType::CUDA, int16_t(index)}));
    cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s), "oar.Tensor.cuda", "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(s), "oar.Tensor.cuda", "cudaStreamSynchronize");
  }
  void copy_on_device(void* dst, const void* src, size_t n, int index) override {
    DeviceGuard guard(index);
    cudaStream_t s = as_stream(current_stream(Device{DeviceType::CUDA, int16_t(index)}));
    cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s), "oar.Tensor.copy_", "cudaMemcpyAsync");
  }
  void copy_from_host_async(void* dst, const void* src, size_t n, int index, void* stream,
                            std::function<void()> done) override {
    DeviceGuard guard(index);
    cudaStream_t s = as_stream(stream);
    if (cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s); e != cudaSuccess) {
      done();
      cuda_check(e, "oar.Tensor.to", "cudaMemcpyAsync");
    }
    auto* fn = new std::function<void()>(std::move(done));
    cudaError_t e = cudaLaunchHostFunc(
        s, [](void* p) {
          auto* f = static_cast<std::function<void()>*>(p);
          (*f)();
          delete f;
        }, fn);
    if (e != cudaSuccess) {
      cudaStreamSynchronize(s);  // the copy is done (or failed): the source may go
      (*fn)();
      delete fn;
      cuda_check(e, "oar.Tensor.to", "cudaLaunchHostFunc");
    }
  }
  void synchronize(int index) override {
    DeviceGuard guard(index);
    cuda_check(cudaDeviceSynchronize(), "oar.device.synchronize", "cudaDeviceSynchronize");
  }

  MemoryStats memory_stats(int index) const override {
    return const_cast<CudaDevice*>(this)->dev(index).alloc.stats();
  }
  void reset_peak_stats(int index) override { dev(index).alloc.reset_peak_allocated(); }
  void reset_peak_reserved(int index) override { dev(index).alloc.reset_peak_reserved(); }
  void empty_cache(int index) override { dev(index).alloc.empty_cache(); }
  void memory_info(int index, size_t* total, size_t* free) override {
    dev(index);
    DeviceGuard guard(index);
    cuda_check(cudaMemGetInfo(free, total), "oar.device.cuda.mem_get_info", "cudaMemGetInfo");
  }
  std::string device_name(int index) override {
    dev(index);
    cudaDeviceProp p;
    cuda_check(cudaGetDeviceProperties(&p, index), "oar.device.get_device_name", "cudaGetDeviceProperties");
    return p.name;
  }

  void* create_stream(int index) override {
    dev(index);
    DeviceGuard guard(index);
    cudaStream_t s = nullptr;
    cuda_check(cudaStreamCreate(&s), "oar.device.Stream", "cudaStreamCreate");
    return s;
  }
  void destroy_stream(int index, void* s) override {
    if (!s) return;
    DeviceGuard guard(index);
    cudaStreamDestroy(static_cast<cudaStream_t>(s));  // returns at once; queued work still completes
  }
  bool query_stream(int index, void* s) override {
    DeviceGuard guard(index);
    cudaError_t e = cudaStreamQuery(as_stream(s));
    if (e == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    cuda_check(e, "oar.device.Stream.query", "cudaStreamQuery");
    return true;
  }
  void synchronize_stream(int index, void* s) override {
    DeviceGuard guard(index);
    cuda_check(cudaStreamSynchronize(as_stream(s)), "oar.device.Stream.synchronize", "cudaStreamSynchronize");
  }
  void stream_wait_event(int index, void* s, void* event) override {
    auto* e = static_cast<CudaEvent*>(event);
    if (!e->recorded) return;
    DeviceGuard guard(index);
    cuda_check(cudaStreamWaitEvent(as_stream(s), e->ev, 0), "oar.device.Stream.wait_event", "cudaStreamWaitEvent");
  }

  void* create_event(int index, bool timing) override {
    dev(index);
    DeviceGuard guard(index);
    auto e = std::make_unique<CudaEvent>();
    cuda_check(cudaEventCreateWithFlags(&e->ev, timing ? cudaEventDefault : cudaEventDisableTiming),
               "oar.device.Event", "cudaEventCreate");
    return e.release();
  }
  void destroy_event(int index, void* event) override {
    auto* e = static_cast<CudaEvent*>(event);
    DeviceGuard guard(index);
    cudaEventDestroy(e->ev);
    delete e;
  }
  void record_event(int index, void* event, void* s) override {
    auto* e = static_cast<CudaEvent*>(event);
    DeviceGuard guard(index);
    cuda_check(cudaEventRecord(e->ev, as_stream(s)), "oar.device.Event.record", "cudaEventRecord");
    e->recorded = true;
  }
  bool query_event(int index, void* event) override {
    auto* e = static_cast<CudaEvent*>(event);
    if (!e->recorded) return true;
    DeviceGuard guard(index);
    cudaError_t r = cudaEventQuery(e->ev);
    if (r == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    cuda_check(r, "oar.device.Event.query", "cudaEventQuery");
    return true;
  }
  void synchronize_event(int index, void* event) override {
    auto* e = static_cast<CudaEvent*>(event);
    if (!e->recorded) return;
    DeviceGuard guard(index);
    cuda_check(cudaEventSynchronize(e->ev), "oar.device.Event.synchronize", "cudaEventSynchronize");
  }
  double event_elapsed_ms(int index, void* start, void* end) override {
    auto *a = static_cast<CudaEvent*>(start), *b = static_cast<CudaEvent*>(end);
    OAR_CHECK(a->recorded && b->recorded, Value, "[oar.device.Event.elapsed_time] both events must have been "
              "recorded");
    DeviceGuard guard(index);
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, a->ev, b->ev), "oar.device.Event.elapsed_time", "cudaEventElapsedTime");
    return ms;
  }

 private:
  struct PerDevice {
    CudaMemory memory;
    CachingAllocator alloc;
    // Size classes as on the CPU (Note [CPU block sizes]), from 512 B:
    // cudaMalloc aligns to 256 B at least, and small blocks are rare on a GPU.
    explicit PerDevice(int index) : alloc(Device{DeviceType::CUDA, int16_t(index)}, &memory, 512, 512) {
      memory.index = index;
    }
  };

  // Checked before any statistic changes, so a bad index leaves them intact.
  PerDevice& dev(int index) {
    std::call_once(init_, [this] {
      count_ = device_count();
      for (int i = 0; i < count_; ++i) devices_.push_back(std::make_unique<PerDevice>(i));
    });
    OAR_CHECK(index >= 0 && index < count_, Value, "[oar] gpu:", index, " does not exist: ", count_,
              " CUDA device(s) are visible");
    return *devices_[size_t(index)];
  }

  std::once_flag init_;
  int count_ = 0;
  std::vector<std::unique_ptr<PerDevice>> devices_;
};

// Never destroyed, like the CPU device: tensors may outlive static destructors.
const bool kRegistered = [] {
  register_device(DeviceType::CUDA, new CudaDevice);
  return true;
}();

}  // namespace
}  // namespace oar
