// The MPI backend of ProcessGroup (Note [collective progress]).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <deque>
#include <exception>
#include <functional>
#include <thread>

#include "dist/liveness.h"
#include "dist/process_group.h"

namespace oar::dist {
namespace {

using Clock = std::chrono::steady_clock;

// float16 and bfloat16 travel as 2-byte opaque elements with our own reduce
// functions (MPI has no 16-bit float types).
MPI_Datatype g_f16 = MPI_DATATYPE_NULL, g_bf16 = MPI_DATATYPE_NULL;
MPI_Op g_half_ops[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

template <typename H, int Op> void half_reduce(const H* in, H* inout, int n) {
  for (int i = 0; i < n; ++i) {
    float a = float(in[i]), b = float(inout[i]);
    float r = Op == 0 ? a + b : Op == 1 ? (a > b || a != a ? a : b) : Op == 2 ? (a < b || a != a ? a : b) : a * b;
    inout[i] = H(r);
  }
}

template <int Op> void half_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  if (*type == g_bf16)
    half_reduce<bfloat16, Op>(static_cast<const bfloat16*>(in), static_cast<bfloat16*>(inout), *len);
  else
    half_reduce<float16, Op>(static_cast<const float16*>(in), static_cast<float16*>(inout), *len);
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Bool: return MPI_C_BOOL;
    case DType::UInt8: return MPI_UINT8_T;
    case DType::Int8: return MPI_INT8_T;
    case DType::Int16: return MPI_INT16_T;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Float16: return g_f16;
    case DType::BFloat16: return g_bf16;
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Complex64: return MPI_C_FLOAT_COMPLEX;
    case DType::Complex128: return MPI_C_DOUBLE_COMPLEX;
  }
  return MPI_BYTE;
}

// Checks that `op` is defined for `t` (raises as the API `api`) and returns the
// MPI operation that carries it out (Avg: a sum, divided afterwards).
MPI_Op mpi_op(const char* api, ReduceOp op, DType t) {
  check_reduce(api, op, t);
  if (t == DType::Bool) {
    // Sum and max of booleans is "any", product and min is "all".
    return op == ReduceOp::Sum || op == ReduceOp::Max ? MPI_LOR : MPI_LAND;
  }
  if (t == DType::Float16 || t == DType::BFloat16) {
    switch (op) {
      case ReduceOp::Sum: case ReduceOp::Avg: return g_half_ops[0];
      case ReduceOp::Max: return g_half_ops[1];
      case ReduceOp::Min: return g_half_ops[2];
      case ReduceOp::Prod: return g_half_ops[3];
    }
  }
  switch (op) {
    case ReduceOp::Sum: case ReduceOp::Avg: return MPI_SUM;
    case ReduceOp::Max: return MPI_MAX;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Prod: return MPI_PROD;
  }
  return MPI_SUM;
}

int count_of(const char* api, int64_t numel) {
  OAR_CHECK(numel <= INT_MAX, NotImplemented, "[", api, "] a tensor of ", numel,
            " elements exceeds MPI's count limit (2^31 - 1 elements); split it");
  return int(numel);
}

void check_tensor(const char* api, const Tensor& t) {
  OAR_CHECK(t.defined(), Value, "[", api, "] expected a tensor, got None");
  OAR_CHECK(t.device().type == DeviceType::CPU, NotImplemented, "[", api,
            "] the MPI process group handles CPU tensors only");
  OAR_CHECK(t.is_contiguous(), Value, "[", api, "] expected a contiguous tensor");
}

// Divides in place by n (ReduceOp.AVG).
void scale_inplace(const Tensor& t, int n) {
  visit_dtype(t.dtype(), [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      T* p = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(float(p[i]) / float(n));
    } else if constexpr (std::is_floating_point_v<T>) {
      T* p = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] /= T(n);
    } else if constexpr (!std::is_integral_v<T>) {  // complex
      T* p = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] /= typename T::value_type(n);
    }
  });
}

std::string ranks_str(const std::vector<int>& r) {
  std::string s = "[";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? ", " : "") + std::to_string(r[i]);
  return s + "]";
}

std::string mpi_error(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, buf, &len);
  return std::string(buf, size_t(len));
}

class MpiGroup;

struct Task {
  const char* name = "";
  std::shared_ptr<MpiGroup> group;
  uint64_t seq = 0;
  // Starts the nonblocking operation; returns an MPI error code.
  std::function<int(std::vector<MPI_Request>&)> start;
  // Optional: starts the next batch of a split operation once the current
  // one has completed; leaves the requests empty when nothing is left.
  // While a task has batches to start, later tasks wait (every rank must
  // start collectives in the same order).
  std::function<int(std::vector<MPI_Request>&)> next;
  std::function<void()> finish;  // after success, on the communication thread
  std::vector<Tensor> keep;      // alive until the operation is done
  WorkPtr work;
  Clock::time_point deadline;
  std::vector<MPI_Request> reqs;
  Clock::time_point lost_since{};  // when a peer of the group was first seen gone
  int lost_rank = -1;              // that peer (the one reported: later losses may follow from it)
  // Outcome, reported to the Work only after the task is retired (so a caller
  // that wakes up never finds tensors still held by the thread).
  bool failed = false;
  ErrorKind error_kind = ErrorKind::Runtime;
  std::string error;
};

// The one communication thread of the process. All MPI calls happen on it
// (MPI_THREAD_FUNNELED: it is also the thread that initialised MPI).
class Comm {
 public:
  static Comm& get() {
    static Comm* c = new Comm;  // never destroyed: its thread may outlive static destructors
    return *c;
  }
  bool initialized() const { return initialized_; }
  WorldInfo world() const { return info_; }
  Liveness& liveness() { return live_; }
  std::atomic<bool> failed{false};

  // Runs f on the communication thread, in order with queued operations, and
  // waits for it (MPI calls that must be made there and cannot time out).
  void call(std::function<void()> f) {
    std::exception_ptr err;
    auto work = std::make_shared<Work>();
    Task t;
    t.name = "call";
    t.start = [&](std::vector<MPI_Request>&) {
      try {
        f();
      } catch (...) {
        err = std::current_exception();
      }
      return int(MPI_SUCCESS);
    };
    t.work = work;
    t.deadline = Clock::time_point::max();
    submit(std::move(t));
    work->wait();
    if (err) std::rethrow_exception(err);
  }

  void submit(Task t) {
    ensure_thread();
    {
      std::lock_guard<std::mutex> lk(mu_);
      queue_.push_back(std::move(t));
    }
    cv_.notify_one();
  }

  WorldInfo init();
  void finalize();

  // Finished tasks still hold tensors (and closures holding tensors), whose
  // release may need the Python interpreter's lock. The communication thread
  // never drops them: it parks them here, and the next collective call (made
  // by a caller thread) releases them.
  // Parks the task, then reports its outcome to its Work.
  void retire(Task&& t) {
    WorkPtr w = t.work;
    bool failed = t.failed;
    ErrorKind kind = t.error_kind;
    std::string error = std::move(t.error);
    {
      std::lock_guard<std::mutex> lk(retired_mu_);
      retired_.push_back(std::move(t));
    }
    if (failed)
      w->fail(kind, std::move(error));
    else
      w->complete();
  }
  void release_retired() {
    std::vector<Task> drop;
    {
      std::lock_guard<std::mutex> lk(retired_mu_);
      drop.swap(retired_);
    }
  }

 private:
  void ensure_thread() {
    std::call_once(thread_once_, [this] { thread_ = std::thread([this] { loop(); }); thread_.detach(); });
  }
  void loop();
  bool poll(Task& t);  // true when the task is finished (either way)

  std::once_flag thread_once_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  std::vector<Task> inflight_;
  std::deque<Task> waiting_;  // submitted, not started yet (see Task::next)
  std::mutex retired_mu_;
  std::vector<Task> retired_;
  Liveness live_;
  WorldInfo info_;
  bool initialized_ = false;
  bool finalized_ = false;
  bool stopping_ = false;  // set on the thread by finalize(); the loop then ends
};

class MpiGroup : public ProcessGroup, public std::enable_shared_from_this<MpiGroup> {
 public:
  MpiGroup(MPI_Comm comm, std::vector<int> ranks, int rank, double timeout_s) : comm_(comm) {
    ranks_ = std::move(ranks);
    rank_ = rank;
    timeout_s_ = timeout_s;
  }
  MPI_Comm comm() const { return comm_; }
  std::atomic<bool> broken{false};
  std::string broken_reason;

  WorkPtr all_reduce(const Tensor& t, ReduceOp op) override {
    const char* api = "oar.distributed.all_reduce";
    check_tensor(api, t);
    MPI_Op mop = mpi_op(api, op, t.dtype());
    int n = count_of(api, t.numel());
    MPI_Datatype ty = mpi_type(t.dtype());
    int gsize = size();
    // Large messages go as 1 MiB pieces, 4 at a time: OpenMPI's nonblocking
    // all-reduce allocates (and faults in) a scratch buffer as large as the
    // message on every call, which dominates above ~32 MiB.
    int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 20) / int64_t(t.itemsize()));
    auto issued = std::make_shared<int64_t>(0);
    auto batch = [=, this](std::vector<MPI_Request>& r) {
      char* base = static_cast<char*>(t.raw_data());
      for (int k = 0; k < 4 && (*issued < n || (n == 0 && r.empty() && *issued == 0)); ++k) {
        int len = int(std::min<int64_t>(chunk, n - *issued));
        r.emplace_back();
        int rc = MPI_Iallreduce(MPI_IN_PLACE, base + *issued * int64_t(t.itemsize()), len, ty, mop, comm_,
                                &r.back());
        if (rc != MPI_SUCCESS) return rc;
        *issued += std::max(len, 1);
      }
      return int(MPI_SUCCESS);
    };
    return submit("all_reduce", {t}, batch,
                  op == ReduceOp::Avg ? std::function<void()>([t, gsize] { scale_inplace(t, gsize); }) : nullptr,
                  n > 4 * chunk ? std::function<int(std::vector<MPI_Request>&)>(batch) : nullptr);
  }

  WorkPtr all_gather(const Tensor& out, const Tensor& in) override {
    const char* api = "oar.distributed.all_gather";
    check_tensor(api, out);
    check_tensor(api, in);
    check_blocks(api, out, in);
    int n = count_of(api, in.numel());
    MPI_Datatype ty = mpi_type(in.dtype());
    return submit("all_gather", {out, in}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Iallgather(in.raw_data(), n, ty, out.raw_data(), n, ty, comm_, r.data());
    });
  }

  WorkPtr reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op) override {
    const char* api = "oar.distributed.reduce_scatter";
    check_tensor(api, out);
    check_tensor(api, in);
    check_blocks(api, in, out);
    MPI_Op mop = mpi_op(api, op, in.dtype());
    int n = count_of(api, out.numel());
    MPI_Datatype ty = mpi_type(in.dtype());
    int gsize = size();
    return submit("reduce_scatter", {out, in}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Ireduce_scatter_block(in.raw_data(), out.raw_data(), n, ty, mop, comm_, r.data());
    }, op == ReduceOp::Avg ? std::function<void()>([out, gsize] { scale_inplace(out, gsize); }) : nullptr);
  }

  WorkPtr reduce(const Tensor& t, int root, ReduceOp op) override {
    const char* api = "oar.distributed.reduce";
    check_tensor(api, t);
    check_root(api, root);
    MPI_Op mop = mpi_op(api, op, t.dtype());
    int n = count_of(api, t.numel());
    MPI_Datatype ty = mpi_type(t.dtype());
    bool is_root = rank_ == root;
    int gsize = size();
    return submit("reduce", {t}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Ireduce(is_root ? MPI_IN_PLACE : t.raw_data(), is_root ? t.raw_data() : nullptr, n, ty, mop,
                         root, comm_, r.data());
    }, op == ReduceOp::Avg && is_root ? std::function<void()>([t, gsize] { scale_inplace(t, gsize); }) : nullptr);
  }

  WorkPtr broadcast(const Tensor& t, int root) override {
    const char* api = "oar.distributed.broadcast";
    check_tensor(api, t);
    check_root(api, root);
    int n = count_of(api, t.numel());
    MPI_Datatype ty = mpi_type(t.dtype());
    return submit("broadcast", {t}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Ibcast(t.raw_data(), n, ty, root, comm_, r.data());
    });
  }

  WorkPtr scatter(const Tensor& out, const Tensor& in, int root) override {
    const char* api = "oar.distributed.scatter";
    check_tensor(api, out);
    check_root(api, root);
    bool is_root = rank_ == root;
    if (is_root) {
      check_tensor(api, in);
      check_blocks(api, in, out);
    }
    int n = count_of(api, out.numel());
    MPI_Datatype ty = mpi_type(out.dtype());
    return submit("scatter", {out, in}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Iscatter(is_root ? in.raw_data() : nullptr, n, ty, out.raw_data(), n, ty, root, comm_,
                          r.data());
    });
  }

  WorkPtr gather(const Tensor& out, const Tensor& in, int root) override {
    const char* api = "oar.distributed.gather";
    check_tensor(api, in);
    check_root(api, root);
    bool is_root = rank_ == root;
    if (is_root) {
      check_tensor(api, out);
      check_blocks(api, out, in);
    }
    int n = count_of(api, in.numel());
    MPI_Datatype ty = mpi_type(in.dtype());
    return submit("gather", {out, in}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Igather(in.raw_data(), n, ty, is_root ? out.raw_data() : nullptr, n, ty, root, comm_, r.data());
    });
  }

  WorkPtr alltoall(const Tensor& out, const Tensor& in, const std::vector<int64_t>& out_counts,
                   const std::vector<int64_t>& in_counts) override {
    const char* api = "oar.distributed.alltoall";
    check_tensor(api, out);
    check_tensor(api, in);
    OAR_CHECK(out.dtype() == in.dtype(), Type, "[", api, "] input and output dtypes differ: ",
              dtype_name(in.dtype()), " vs ", dtype_name(out.dtype()));
    auto counts = [&](const std::vector<int64_t>& c, const Tensor& t, const char* what) {
      std::vector<int> n(static_cast<size_t>(size())), d(static_cast<size_t>(size()));
      if (c.empty()) {
        OAR_CHECK(t.numel() % size() == 0, Value, "[", api, "] the ", what, " tensor's ", t.numel(),
                  " elements do not split into ", size(), " equal blocks");
        std::fill(n.begin(), n.end(), count_of(api, t.numel() / size()));
      } else {
        OAR_CHECK(int(c.size()) == size(), Value, "[", api, "] expected ", size(), " ", what, " split sizes, got ",
                  c.size());
        int64_t total = 0;
        for (size_t i = 0; i < c.size(); ++i) {
          OAR_CHECK(c[i] >= 0, Value, "[", api, "] split sizes must be >= 0, got ", c[i]);
          n[i] = count_of(api, c[i]);
          total += c[i];
        }
        OAR_CHECK(total == t.numel(), Value, "[", api, "] the ", what, " split sizes add up to ", total,
                  " but the tensor has ", t.numel(), " elements");
      }
      int64_t off = 0;
      for (size_t i = 0; i < n.size(); ++i) {
        d[i] = count_of(api, off);
        off += n[i];
      }
      return std::make_pair(n, d);
    };
    std::pair<std::vector<int>, std::vector<int>> sc = counts(in_counts, in, "input");
    std::pair<std::vector<int>, std::vector<int>> rc = counts(out_counts, out, "output");
    MPI_Datatype ty = mpi_type(in.dtype());
    return submit("alltoall", {out, in}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Ialltoallv(in.raw_data(), sc.first.data(), sc.second.data(), ty, out.raw_data(), rc.first.data(),
                            rc.second.data(), ty,
                            comm_, r.data());
    });
  }

  WorkPtr send(const Tensor& t, int dst) override {
    const char* api = "oar.distributed.send";
    check_tensor(api, t);
    check_root(api, dst);
    int n = count_of(api, t.numel());
    MPI_Datatype ty = mpi_type(t.dtype());
    return submit("send", {t}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Isend(t.raw_data(), n, ty, dst, 0, comm_, r.data());
    });
  }

  WorkPtr recv(const Tensor& t, int src) override {
    const char* api = "oar.distributed.recv";
    check_tensor(api, t);
    check_root(api, src);
    int n = count_of(api, t.numel());
    MPI_Datatype ty = mpi_type(t.dtype());
    return submit("recv", {t}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Irecv(t.raw_data(), n, ty, src, 0, comm_, r.data());
    });
  }

  WorkPtr barrier() override {
    return submit("barrier", {}, [=, this](std::vector<MPI_Request>& r) {
      r.resize(1);
      return MPI_Ibarrier(comm_, r.data());
    });
  }

 private:
  void check_root(const char* api, int root) const {
    OAR_CHECK(rank_ >= 0, Value, "[", api, "] this process (rank ", Comm::get().world().rank,
              ") is not a member of the group ", ranks_str(ranks_));
    OAR_CHECK(root >= 0 && root < size(), Value, "[", api, "] the peer rank must be in [0, ", size(),
              ") within the group, got ", root);
  }
  void check_blocks(const char* api, const Tensor& big, const Tensor& block) const {
    OAR_CHECK(big.dtype() == block.dtype(), Type, "[", api, "] input and output dtypes differ: ",
              dtype_name(block.dtype()), " vs ", dtype_name(big.dtype()));
    OAR_CHECK(big.numel() == block.numel() * size(), Value, "[", api, "] expected ", size(), " x ",
              block.numel(), " = ", block.numel() * size(), " elements for the gathered side, got ", big.numel());
  }

  WorkPtr submit(const char* name, std::vector<Tensor> keep, std::function<int(std::vector<MPI_Request>&)> start,
                 std::function<void()> finish = nullptr,
                 std::function<int(std::vector<MPI_Request>&)> next = nullptr) {
    OAR_CHECK(rank_ >= 0, Value, "[oar.distributed.", name, "] this process (rank ", Comm::get().world().rank,
              ") is not a member of the group ", ranks_str(ranks_));
    OAR_CHECK(!broken.load(), Runtime, "[oar.distributed.", name, "] the group ", ranks_str(ranks_),
              " is unusable after an earlier failure: ", broken_reason);
    Task t;
    t.name = name;
    t.group = shared_from_this();
    t.seq = ++seq_;
    t.start = std::move(start);
    t.finish = std::move(finish);
    t.next = std::move(next);
    t.keep = std::move(keep);
    t.work = std::make_shared<Work>();
    t.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
    WorkPtr w = t.work;
    Comm::get().release_retired();
    Comm::get().submit(std::move(t));
    return w;
  }

  MPI_Comm comm_;
  std::atomic<uint64_t> seq_{0};
};

std::shared_ptr<MpiGroup> g_world;

WorldInfo Comm::init() {
  if (initialized_) return info_;
  call([this] {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int provided = 0;
      // The ring algorithm for nonblocking all-reduce: OpenMPI's default
      // (recursive doubling) is slower for the large messages gradients are.
      // A user's own setting wins.
      setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    }
    MPI_Type_contiguous(2, MPI_BYTE, &g_f16);
    MPI_Type_commit(&g_f16);
    MPI_Type_contiguous(2, MPI_BYTE, &g_bf16);
    MPI_Type_commit(&g_bf16);
    MPI_Op_create(&half_op<0>, 1, &g_half_ops[0]);
    MPI_Op_create(&half_op<1>, 1, &g_half_ops[1]);
    MPI_Op_create(&half_op<2>, 1, &g_half_ops[2]);
    MPI_Op_create(&half_op<3>, 1, &g_half_ops[3]);
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world, &info_.rank);
    MPI_Comm_size(world, &info_.size);
    MPI_Comm local;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, info_.rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &info_.local_rank);
    MPI_Comm_size(local, &info_.local_size);
    MPI_Comm_free(&local);
    if (info_.size > 1) {
      std::string addr = info_.rank == 0 ? live_.listen(info_.size) : std::string();
      int len = int(addr.size());
      MPI_Bcast(&len, 1, MPI_INT, 0, world);
      addr.resize(size_t(len));
      MPI_Bcast(addr.data(), len, MPI_CHAR, 0, world);
      if (info_.rank != 0) live_.connect(addr, info_.rank, info_.size);
    }
    std::vector<int> ranks(size_t(info_.size));
    for (int i = 0; i < info_.size; ++i) ranks[size_t(i)] = i;
    g_world = std::make_shared<MpiGroup>(world, std::move(ranks), info_.rank, 600.0);
  });
  initialized_ = true;
  return info_;
}

void Comm::finalize() {
  if (!initialized_ || finalized_) return;
  finalized_ = true;
  // After a failure MPI_Finalize would wait for the lost peer: leave without
  // it, but stop the thread polling MPI before the process exits.
  bool clean = !failed.load();
  call([this, clean] {
    if (clean) {
      live_.shutdown();
      MPI_Finalize();
    }
    stopping_ = true;
  });
}

// True when the task has finished (completed or failed).
bool Comm::poll(Task& t) {
  int done = 0;
  int rc = MPI_Testall(int(t.reqs.size()), t.reqs.data(), &done, MPI_STATUSES_IGNORE);
  MpiGroup& g = *t.group;
  auto fail = [&](ErrorKind kind, const std::string& msg) {
    g.broken_reason = msg;
    g.broken = true;
    failed = true;
    t.failed = true;
    t.error_kind = kind;
    t.error = msg;
    return true;
  };
  auto where = [&] {  // built only on a failure path
    return std::string(" collective #") + std::to_string(t.seq) + " (" + t.name + ") on the group " +
           ranks_str(g.ranks());
  };
  if (rc != MPI_SUCCESS)
    return fail(ErrorKind::Runtime, std::string("[oar.distributed.") + t.name + "] MPI failed in" + where() + ": " +
                                        mpi_error(rc));
  if (done && t.next) {
    t.reqs.clear();
    int nrc = t.next(t.reqs);
    if (nrc != MPI_SUCCESS)
      return fail(ErrorKind::Runtime, std::string("[oar.distributed.") + t.name + "] MPI failed in" + where() +
                                          ": " + mpi_error(nrc));
    if (!t.reqs.empty()) return false;
    t.next = nullptr;
  }
  if (done) {
    if (t.finish) t.finish();
    return true;
  }
  Clock::time_point now = Clock::now();
  // A peer that is gone may have delivered its part before leaving: allow a
  // moment (longer for a clean finish) before calling the collective lost.
  if (t.lost_rank < 0) {
    for (int r : g.ranks())
      if (live_.state(r) != PeerState::Alive) {
        t.lost_rank = r;
        t.lost_since = now;
        break;
      }
  }
  if (t.lost_rank >= 0) {
    PeerState s = live_.state(t.lost_rank);
    auto grace = std::chrono::milliseconds(s == PeerState::Died ? 1000 : 5000);
    if (now - t.lost_since >= grace)
      return fail(ErrorKind::Runtime,
                  std::string("[oar.distributed.") + t.name + "] rank " + std::to_string(t.lost_rank) +
                      (s == PeerState::Died ? " died (its process ended)" : " had already shut down") +
                      " while rank " + std::to_string(info_.rank) + " waited in" + where());
  }
  if (now > t.deadline) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", g.timeout_seconds());
    return fail(ErrorKind::Timeout, std::string("[oar.distributed.") + t.name + "] timed out after " + secs +
                                        " s on rank " + std::to_string(info_.rank) + " waiting for" + where() +
                                        ": a peer did not reach this collective or is stuck");
  }
  return false;
}

void Comm::loop() {
  int idle = 0;
  auto last_progress = Clock::now();
  while (true) {
    std::deque<Task> fresh;
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (inflight_.empty() && waiting_.empty()) cv_.wait(lk, [&] { return !queue_.empty(); });
      fresh.swap(queue_);
    }
    bool any_fresh = !fresh.empty();
    for (Task& t : fresh) waiting_.push_back(std::move(t));
    auto blocked = [&] {
      for (const Task& t : inflight_)
        if (t.next) return true;
      return false;
    };
    while (!waiting_.empty() && !blocked()) {
      Task t = std::move(waiting_.front());
      waiting_.pop_front();
      if (!t.group) {  // a call (see Comm::call): runs to completion here
        std::vector<MPI_Request> none;
        t.start(none);
        t.work->complete();
        continue;
      }
      if (t.group->broken) {
        t.failed = true;
        t.error = std::string("[oar.distributed.") + t.name + "] the group " + ranks_str(t.group->ranks()) +
                  " is unusable after an earlier failure: " + t.group->broken_reason;
        retire(std::move(t));
        continue;
      }
      int rc = t.start(t.reqs);
      if (rc != MPI_SUCCESS) {
        t.failed = true;
        t.error = std::string("[oar.distributed.") + t.name + "] MPI failed: " + mpi_error(rc);
        retire(std::move(t));
        continue;
      }
      inflight_.push_back(std::move(t));
    }
    if (stopping_) return;
    size_t before = inflight_.size();
    // Completion in issue order is not required: test every request.
    for (size_t i = 0; i < inflight_.size();) {
      if (poll(inflight_[i])) {
        retire(std::move(inflight_[i]));
        inflight_.erase(inflight_.begin() + std::ptrdiff_t(i));
      } else {
        ++i;
      }
    }
    if (inflight_.size() < before || any_fresh) {
      idle = 0;
      last_progress = Clock::now();
    } else if (++idle > 64) {
      // Waiting long for a slow peer should not hold a core.
      if (Clock::now() - last_progress > std::chrono::milliseconds(50))
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      else
        std::this_thread::yield();
    }
  }
}

}  // namespace

// A process not started by an MPI launcher is a job of one: no MPI at all
// (a singleton MPI_Init would start a helper daemon and complicate fork()).
ProcessGroupPtr g_self;

WorldInfo init_world(double timeout_s) {
  if (g_self || (!Comm::get().initialized() && !launched_by_mpi())) {
    if (!g_self) g_self = make_self_group(timeout_s);
    return WorldInfo{};
  }
  WorldInfo info = Comm::get().init();
  g_world->set_timeout(timeout_s);
  return info;
}

bool world_initialized() { return g_self || Comm::get().initialized(); }

WorldInfo world_info() { return g_self || !Comm::get().initialized() ? WorldInfo{} : Comm::get().world(); }

ProcessGroupPtr world_group() {
  if (g_self) return g_self;
  OAR_CHECK(world_initialized(), Runtime,
            "[oar.distributed] the parallel environment is not initialised: call "
            "oar.distributed.init_parallel_env() first");
  return g_world;
}

ProcessGroupPtr new_group(const std::vector<int>& ranks, double timeout_s) {
  if (g_self) {
    OAR_CHECK(ranks.size() == 1 && ranks[0] == 0, Value,
              "[oar.distributed.new_group] a job of one process has only rank 0, got ", ranks_str(ranks));
    return make_self_group(timeout_s);
  }
  WorldInfo info = Comm::get().world();
  std::vector<int> sorted = ranks;
  for (int r : ranks)
    OAR_CHECK(r >= 0 && r < info.size, Value, "[oar.distributed.new_group] ranks must be in [0, ", info.size,
              "), got ", r);
  std::sort(sorted.begin(), sorted.end());
  OAR_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), Value,
            "[oar.distributed.new_group] ranks must be distinct, got ", ranks_str(ranks));
  int my = -1;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == info.rank) my = int(i);
  MPI_Comm comm = MPI_COMM_NULL;
  if (my >= 0) {
    MPI_Comm world = g_world->comm();
    Comm::get().call([&] {
      MPI_Group wg, sg;
      MPI_Comm_group(world, &wg);
      MPI_Group_incl(wg, int(ranks.size()), ranks.data(), &sg);
      MPI_Comm_create_group(world, sg, 0, &comm);
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      MPI_Group_free(&sg);
      MPI_Group_free(&wg);
    });
  }
  return std::make_shared<MpiGroup>(comm, ranks, my, timeout_s);
}

void shutdown_world() { Comm::get().finalize(); }

void release_finished() { Comm::get().release_retired(); }

const char* peer_lost(int global_rank) {
  if (!Comm::get().initialized()) return nullptr;
  switch (Comm::get().liveness().state(global_rank)) {
    case PeerState::Died: return "died";
    case PeerState::Finished: return "shut down";
    default: return nullptr;
  }
}

bool built_with_mpi() { return true; }

}  // namespace oar::dist
