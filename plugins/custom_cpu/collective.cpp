// custom_cpu's collectives, across processes on one machine, through files.
//
// Note [custom_cpu collectives]: get_unique_id makes a fresh folder (in
// CUSTOM_CPU_COMM_DIR, else /dev/shm when there is one) and the id is its
// path. Each collective of a
// communicator has a sequence number; every rank writes what it contributes
// to `c<seq>.r<rank>` (written aside, then renamed, so a file that exists is
// complete) and reads the files of all ranks, then computes its own result,
// reducing in rank order so that every rank gets the same bits. Every rank
// writes a file for every collective (an empty one where it has nothing to
// send), so reaching collective `seq` means every rank has read the files of
// `seq - 2`: a rank removes its own then. A header in each file names the
// collective and its count, so ranks that call different collectives get an
// error, not garbage. Point-to-point messages are files `p<src>.<dst>.<n>`
// that the receiver removes; a send never waits, so the only calls that
// group_start/group_end need to hold back are receives. Waiting polls the
// folder until CUSTOM_CPU_COMM_TIMEOUT seconds (default 300) have passed. A
// failed collective leaves a `broken` file with its message: the ranks'
// sequence numbers no longer agree, so every later call of any rank fails.
// comm_destroy leaves a `bye` file per rank; rank 0 removes the folder once
// it has them all. Each call first waits for the work queued on its stream,
// then runs on the calling thread: when it returns, it is done.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "custom_cpu.h"

namespace custom_cpu {
namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<char>;

struct Comm {
  std::string dir;
  int device = 0, rank = 0, nranks = 1;
  uint64_t seq = 0;
  std::vector<uint64_t> sent, received;  // point-to-point messages, per peer
  double timeout_s = 300;
};

struct Header {
  char op[16];
  uint64_t count;
  int32_t dtype;
  int32_t root;
};

// Receives deferred by group_start until group_end (calling thread's).
struct PendingRecv {
  void* buf;
  size_t count;
  OAR_DataType dtype;
  int peer;
  Comm* comm;
  OAR_Stream stream;
};
thread_local int t_group_depth = 0;
thread_local std::vector<PendingRecv> t_pending_recvs;

size_t dtype_size(OAR_DataType t) {
  switch (t) {
    case OAR_DTYPE_BOOL:
    case OAR_DTYPE_UINT8:
    case OAR_DTYPE_INT8: return 1;
    case OAR_DTYPE_INT16:
    case OAR_DTYPE_FLOAT16:
    case OAR_DTYPE_BFLOAT16: return 2;
    case OAR_DTYPE_INT32:
    case OAR_DTYPE_FLOAT32: return 4;
    case OAR_DTYPE_INT64:
    case OAR_DTYPE_FLOAT64:
    case OAR_DTYPE_COMPLEX64: return 8;
    case OAR_DTYPE_COMPLEX128: return 16;
  }
  return 0;
}

// Where communicators' folders go: CUSTOM_CPU_COMM_DIR, else /dev/shm when
// there is one, else /tmp.
std::string shm_root() {
  if (const char* d = std::getenv("CUSTOM_CPU_COMM_DIR"); d && *d) return d;
  struct stat st;
  return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

double comm_timeout() {
  const char* v = std::getenv("CUSTOM_CPU_COMM_TIMEOUT");
  double s = v ? std::atof(v) : 0;
  return s > 0 ? s : 300;
}

std::string where(const Comm& c, const char* op) {
  return std::string("custom_cpu ") + op + " #" + std::to_string(c.seq) + " (rank " + std::to_string(c.rank) +
         " of " + std::to_string(c.nranks) + ")";
}

bool write_file(const std::string& path, Header h, const void* data, size_t bytes) {
  h.count = bytes;
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(&h, sizeof h, 1, f) == 1 && (bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes);
  ok = std::fclose(f) == 0 && ok;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool read_file(const std::string& path, Header* h, Bytes* data) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  bool ok = std::fread(h, sizeof *h, 1, f) == 1;
  if (ok) {
    data->resize(h->count);
    ok = h->count == 0 || std::fread(data->data(), 1, h->count, f) == h->count;
  }
  std::fclose(f);
  return ok;
}

std::string broken_file(const Comm& c) { return c.dir + "/broken"; }

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Why the communicator is broken ("" while it is not): the first failed
// collective of any rank leaves its message in the folder, since the ranks'
// sequence numbers no longer agree after it.
std::string broken_why(const Comm& c) {
  if (!exists(broken_file(c))) return {};
  std::string why = "an earlier collective failed";
  if (FILE* f = std::fopen(broken_file(c).c_str(), "rb")) {
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    if (n) why = std::string(buf, n);
  }
  return "the communicator is broken (" + why + ")";
}

OAR_Status break_comm(const Comm& c, OAR_Status s, const std::string& why) {
  if (!exists(broken_file(c))) {
    const std::string tmp = broken_file(c) + ".r" + std::to_string(c.rank);
    if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
      std::fwrite(why.data(), 1, why.size(), f);
      std::fclose(f);
      std::rename(tmp.c_str(), broken_file(c).c_str());
    }
  }
  return set_error(s, why);
}

// Waits until `path` exists: OAR_SUCCESS, or an error after the
// communicator's timeout or once it is broken (`what` says for what).
OAR_Status wait_for(const Comm& c, const std::string& path, const std::string& what) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(c.timeout_s);
  int sleep_us = 10;
  while (!exists(path)) {
    if (std::string why = broken_why(c); !why.empty()) return set_error(OAR_ERROR, what + ": " + why);
    if (Clock::now() > deadline)
      return break_comm(c, OAR_ERROR, what + " within " + std::to_string(int(c.timeout_s)) +
                                          " s (CUSTOM_CPU_COMM_TIMEOUT)");
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    sleep_us = std::min(sleep_us * 2, 1000);
  }
  return OAR_SUCCESS;
}

// One collective step (Note [custom_cpu collectives]): this rank's `bytes`
// out, every rank's in. The header's fields but the count must agree across
// ranks.
OAR_Status exchange(Comm& c, Header h, const void* data, size_t bytes, std::vector<Bytes>* all) {
  ++c.seq;
  auto file = [&](uint64_t seq, int r) { return c.dir + "/c" + std::to_string(seq) + ".r" + std::to_string(r); };
  if (std::string why = broken_why(c); !why.empty()) return set_error(OAR_ERROR, where(c, h.op) + ": " + why);
  if (!write_file(file(c.seq, c.rank), h, data, bytes))
    return break_comm(c, OAR_ERROR, where(c, h.op) + ": cannot write to " + c.dir + ": " + std::strerror(errno));
  if (c.seq > 2) std::remove(file(c.seq - 2, c.rank).c_str());
  all->assign(size_t(c.nranks), {});
  for (int r = 0; r < c.nranks; ++r) {
    if (OAR_Status s = wait_for(c, file(c.seq, r), where(c, h.op) + ": rank " + std::to_string(r) + " did not join");
        s != OAR_SUCCESS)
      return s;
    Header g;
    if (!read_file(file(c.seq, r), &g, &(*all)[size_t(r)]))
      return break_comm(c, OAR_ERROR, where(c, h.op) + ": cannot read rank " + std::to_string(r) + "'s data");
    if (std::strncmp(g.op, h.op, sizeof g.op) != 0 || g.dtype != h.dtype || g.root != h.root)
      return break_comm(c, OAR_ERROR_INVALID_ARGUMENT,
                        where(c, h.op) + ": rank " + std::to_string(r) + " called " +
                            std::string(g.op, strnlen(g.op, sizeof g.op)) +
                            " with another dtype or root; every rank must make the same calls in the same order");
  }
  return OAR_SUCCESS;
}

Header header(const char* op, OAR_DataType dtype, int root = -1) {
  Header h{};
  std::strncpy(h.op, op, sizeof h.op - 1);
  h.dtype = int32_t(dtype);
  h.root = root;
  return h;
}

// ---- Reductions ---------------------------------------------------------------

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  float f;
  if (exp == 0) {
    f = std::ldexp(float(man), -24);
  } else if (exp == 31) {
    f = man ? NAN : INFINITY;
  } else {
    f = std::ldexp(float(man | 0x400), exp - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= sign;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (a < 6.103515625e-05f) return sign | uint16_t(std::nearbyint(a * 16777216.0f));  // subnormal: units of 2^-24
  int e;
  const float m = std::frexp(a, &e);                                // a = m * 2^e, m in [0.5, 1)
  uint32_t man = uint32_t(std::nearbyint(std::ldexp(m, 11)));       // 11 significant bits
  if (man == 2048) { man = 1024; ++e; }
  return sign | uint16_t(((e + 14) << 10) | (man & 0x3ff));
}

float bf16_to_float(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);  // round to nearest even
  return uint16_t(x >> 16);
}

template <class T, class Acc>
void reduce_typed(const std::vector<const char*>& parts, char* out, size_t count, OAR_ReduceOp op, int nranks,
                  Acc (*load)(T), T (*store)(Acc)) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, parts[0] + i * sizeof(T), sizeof(T));
    Acc acc = load(v);
    for (size_t r = 1; r < parts.size(); ++r) {
      std::memcpy(&v, parts[r] + i * sizeof(T), sizeof(T));
      const Acc x = load(v);
      switch (op) {
        case OAR_REDUCE_SUM:
        case OAR_REDUCE_AVG: acc = Acc(acc + x); break;
        case OAR_REDUCE_PROD: acc = Acc(acc * x); break;
        case OAR_REDUCE_MAX: acc = x > acc ? x : acc; break;
        case OAR_REDUCE_MIN: acc = x < acc ? x : acc; break;
      }
    }
    if (op == OAR_REDUCE_AVG) acc = Acc(acc / Acc(nranks));
    const T res = store(acc);
    std::memcpy(out + i * sizeof(T), &res, sizeof(T));
  }
}

template <class T>
T same(T v) {
  return v;
}

// out[i] = op over ranks of parts[r][i]; false for a dtype it cannot reduce.
bool reduce_into(const std::vector<const char*>& parts, void* out_v, size_t count, OAR_DataType dtype, OAR_ReduceOp op) {
  char* out = static_cast<char*>(out_v);
  const int n = int(parts.size());
  switch (dtype) {
    case OAR_DTYPE_BOOL:
    case OAR_DTYPE_UINT8: reduce_typed<uint8_t, uint8_t>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_INT8: reduce_typed<int8_t, int8_t>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_INT16: reduce_typed<int16_t, int16_t>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_INT32: reduce_typed<int32_t, int32_t>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_INT64: reduce_typed<int64_t, int64_t>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_FLOAT32: reduce_typed<float, float>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_FLOAT64: reduce_typed<double, double>(parts, out, count, op, n, same, same); return true;
    case OAR_DTYPE_FLOAT16:
      reduce_typed<uint16_t, float>(parts, out, count, op, n, half_to_float, float_to_half);
      return true;
    case OAR_DTYPE_BFLOAT16:
      reduce_typed<uint16_t, float>(parts, out, count, op, n, bf16_to_float, float_to_bf16);
      return true;
    default: return false;
  }
}

// ---- Entries ------------------------------------------------------------------

Comm* as_comm(OAR_Comm c) { return reinterpret_cast<Comm*>(c); }

// What every entry checks first; then it waits for the stream's queued work.
OAR_Status begin(Comm* c, OAR_DataType dtype, const char* op, OAR_Stream stream) {
  if (!c) return set_error(OAR_ERROR_INVALID_ARGUMENT, std::string("custom_cpu ") + op + ": no communicator");
  if (dtype_size(dtype) == 0)
    return set_error(OAR_ERROR_INVALID_ARGUMENT, std::string("custom_cpu ") + op + ": unknown dtype " +
                                                     std::to_string(int(dtype)));
  synchronize_stream(c->device, stream);
  return OAR_SUCCESS;
}

std::vector<const char*> blocks(const std::vector<Bytes>& all, size_t offset) {
  std::vector<const char*> v;
  for (const Bytes& b : all) v.push_back(b.data() + offset);
  return v;
}

OAR_Status unsupported_dtype(const Comm& c, const char* op, OAR_DataType dtype) {
  return set_error(OAR_ERROR_UNSUPPORTED, where(c, op) + ": cannot reduce dtype " + std::to_string(int(dtype)));
}

OAR_Status get_unique_id(OAR_UniqueId* id) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  const std::string dir = shm_root() + "/oar_custom_cpu_" + std::to_string(getpid()) + "_" +
                          std::to_string(counter++) + "_" + std::to_string(rd());
  if (dir.size() >= sizeof id->bytes) return set_error(OAR_ERROR, "custom_cpu get_unique_id: path too long: " + dir);
  if (mkdir(dir.c_str(), 0700) != 0)
    return set_error(OAR_ERROR, "custom_cpu get_unique_id: cannot make " + dir + ": " + std::strerror(errno));
  std::memset(id->bytes, 0, sizeof id->bytes);
  std::memcpy(id->bytes, dir.data(), dir.size());
  return OAR_SUCCESS;
}

OAR_Status comm_init_rank(int device, int nranks, const OAR_UniqueId* id, int rank, OAR_Comm* comm) {
  if (!valid_device(device))
    return set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu comm_init_rank: no device " + std::to_string(device));
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu comm_init_rank: rank " + std::to_string(rank) +
                                                     " of " + std::to_string(nranks) + " ranks");
  auto* c = new Comm;
  c->dir.assign(reinterpret_cast<const char*>(id->bytes), strnlen(reinterpret_cast<const char*>(id->bytes),
                                                                   sizeof id->bytes));
  c->device = device;
  c->rank = rank;
  c->nranks = nranks;
  c->sent.assign(size_t(nranks), 0);
  c->received.assign(size_t(nranks), 0);
  c->timeout_s = comm_timeout();
  struct stat st;
  if (c->dir.empty() || stat(c->dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    OAR_Status s = set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu comm_init_rank: the unique id names no "
                                                         "folder of this machine ('" + c->dir + "')");
    delete c;
    return s;
  }
  // Every rank must agree on the number of ranks: it travels as the root.
  std::vector<Bytes> all;
  OAR_Status s = exchange(*c, header("comm_init_rank", OAR_DTYPE_UINT8, nranks), nullptr, 0, &all);
  if (s != OAR_SUCCESS) {
    delete c;
    return s;
  }
  *comm = reinterpret_cast<OAR_Comm>(c);
  return OAR_SUCCESS;
}

OAR_Status comm_destroy(OAR_Comm comm) {
  Comm* c = as_comm(comm);
  if (!c) return OAR_SUCCESS;
  auto bye = [&](int r) { return c->dir + "/bye.r" + std::to_string(r); };
  write_file(bye(c->rank), header("bye", OAR_DTYPE_UINT8), nullptr, 0);
  if (c->rank == 0) {
    c->timeout_s = std::min(c->timeout_s, 10.0);
    for (int r = 1; r < c->nranks; ++r)
      if (wait_for(*c, bye(r), "comm_destroy") != OAR_SUCCESS) break;
    if (DIR* d = opendir(c->dir.c_str())) {
      while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          std::remove((c->dir + "/" + e->d_name).c_str());
      closedir(d);
    }
    rmdir(c->dir.c_str());
  }
  delete c;
  return OAR_SUCCESS;
}

OAR_Status all_reduce(const void* send, void* recv, size_t count, OAR_DataType dtype, OAR_ReduceOp op, OAR_Comm comm,
                      OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "all_reduce", stream); s != OAR_SUCCESS) return s;
  std::vector<Bytes> all;
  if (OAR_Status s = exchange(*c, header("all_reduce", dtype, int(op)), send, count * dtype_size(dtype), &all);
      s != OAR_SUCCESS)
    return s;
  return reduce_into(blocks(all, 0), recv, count, dtype, op) ? OAR_SUCCESS : unsupported_dtype(*c, "all_reduce", dtype);
}

OAR_Status broadcast(const void* send, void* recv, size_t count, OAR_DataType dtype, int root, OAR_Comm comm,
                     OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "broadcast", stream); s != OAR_SUCCESS) return s;
  const size_t bytes = count * dtype_size(dtype);
  std::vector<Bytes> all;
  OAR_Status s = exchange(*c, header("broadcast", dtype, root), send, c->rank == root ? bytes : 0, &all);
  if (s != OAR_SUCCESS) return s;
  if (all[size_t(root)].size() != bytes)
    return set_error(OAR_ERROR_INVALID_ARGUMENT, where(*c, "broadcast") + ": the root sent another count");
  if (bytes) std::memmove(recv, all[size_t(root)].data(), bytes);
  return OAR_SUCCESS;
}

OAR_Status reduce(const void* send, void* recv, size_t count, OAR_DataType dtype, OAR_ReduceOp op, int root,
                  OAR_Comm comm, OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "reduce", stream); s != OAR_SUCCESS) return s;
  std::vector<Bytes> all;
  if (OAR_Status s = exchange(*c, header("reduce", dtype, root), send, count * dtype_size(dtype), &all);
      s != OAR_SUCCESS)
    return s;
  if (c->rank != root) return OAR_SUCCESS;
  return reduce_into(blocks(all, 0), recv, count, dtype, op) ? OAR_SUCCESS : unsupported_dtype(*c, "reduce", dtype);
}

OAR_Status all_gather(const void* send, void* recv, size_t send_count, OAR_DataType dtype, OAR_Comm comm,
                      OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "all_gather", stream); s != OAR_SUCCESS) return s;
  const size_t bytes = send_count * dtype_size(dtype);
  std::vector<Bytes> all;
  if (OAR_Status s = exchange(*c, header("all_gather", dtype), send, bytes, &all); s != OAR_SUCCESS) return s;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].size() != bytes)
      return set_error(OAR_ERROR_INVALID_ARGUMENT, where(*c, "all_gather") + ": rank " + std::to_string(r) +
                                                       " sent another count");
    if (bytes) std::memcpy(static_cast<char*>(recv) + r * bytes, all[r].data(), bytes);
  }
  return OAR_SUCCESS;
}

OAR_Status reduce_scatter(const void* send, void* recv, size_t recv_count, OAR_DataType dtype, OAR_ReduceOp op,
                          OAR_Comm comm, OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "reduce_scatter", stream); s != OAR_SUCCESS) return s;
  const size_t bytes = recv_count * dtype_size(dtype);
  std::vector<Bytes> all;
  if (OAR_Status s = exchange(*c, header("reduce_scatter", dtype, int(op)), send, bytes * size_t(c->nranks), &all);
      s != OAR_SUCCESS)
    return s;
  return reduce_into(blocks(all, size_t(c->rank) * bytes), recv, recv_count, dtype, op)
             ? OAR_SUCCESS
             : unsupported_dtype(*c, "reduce_scatter", dtype);
}

OAR_Status all_to_all(const void* send, void* recv, size_t count, OAR_DataType dtype, OAR_Comm comm,
                      OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "all_to_all", stream); s != OAR_SUCCESS) return s;
  const size_t bytes = count * dtype_size(dtype);
  std::vector<Bytes> all;
  if (OAR_Status s = exchange(*c, header("all_to_all", dtype), send, bytes * size_t(c->nranks), &all);
      s != OAR_SUCCESS)
    return s;
  for (size_t r = 0; r < all.size(); ++r)
    if (bytes) std::memcpy(static_cast<char*>(recv) + r * bytes, all[r].data() + size_t(c->rank) * bytes, bytes);
  return OAR_SUCCESS;
}

std::string p2p_file(const Comm& c, int src, int dst, uint64_t n) {
  return c.dir + "/p" + std::to_string(src) + "." + std::to_string(dst) + "." + std::to_string(n);
}

OAR_Status check_peer(const Comm* c, int peer, const char* op) {
  if (peer < 0 || peer >= c->nranks || peer == c->rank)
    return set_error(OAR_ERROR_INVALID_ARGUMENT, std::string("custom_cpu ") + op + ": peer " + std::to_string(peer) +
                                                     " is not another rank of the communicator");
  return OAR_SUCCESS;
}

OAR_Status send(const void* buf, size_t count, OAR_DataType dtype, int peer, OAR_Comm comm, OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "send", stream); s != OAR_SUCCESS) return s;
  if (OAR_Status s = check_peer(c, peer, "send"); s != OAR_SUCCESS) return s;
  const std::string f = p2p_file(*c, c->rank, peer, c->sent[size_t(peer)]++);
  if (!write_file(f, header("send", dtype), buf, count * dtype_size(dtype)))
    return set_error(OAR_ERROR, "custom_cpu send: cannot write " + f + ": " + std::strerror(errno));
  return OAR_SUCCESS;
}

OAR_Status recv_now(void* buf, size_t count, OAR_DataType dtype, int peer, Comm* c) {
  const std::string f = p2p_file(*c, peer, c->rank, c->received[size_t(peer)]++);
  if (OAR_Status s = wait_for(*c, f, "custom_cpu recv (rank " + std::to_string(c->rank) + "): nothing from rank " +
                                          std::to_string(peer));
      s != OAR_SUCCESS)
    return s;
  Header h;
  Bytes data;
  const bool ok = read_file(f, &h, &data);
  std::remove(f.c_str());
  if (!ok || h.dtype != int32_t(dtype) || data.size() != count * dtype_size(dtype))
    return set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu recv (rank " + std::to_string(c->rank) + "): rank " +
                                                     std::to_string(peer) + " sent another dtype or count");
  if (!data.empty()) std::memcpy(buf, data.data(), data.size());
  return OAR_SUCCESS;
}

OAR_Status recv(void* buf, size_t count, OAR_DataType dtype, int peer, OAR_Comm comm, OAR_Stream stream) {
  Comm* c = as_comm(comm);
  if (OAR_Status s = begin(c, dtype, "recv", stream); s != OAR_SUCCESS) return s;
  if (OAR_Status s = check_peer(c, peer, "recv"); s != OAR_SUCCESS) return s;
  if (t_group_depth > 0) {
    t_pending_recvs.push_back({buf, count, dtype, peer, c, stream});
    return OAR_SUCCESS;
  }
  return recv_now(buf, count, dtype, peer, c);
}

OAR_Status group_start() {
  ++t_group_depth;
  return OAR_SUCCESS;
}

OAR_Status group_end() {
  if (t_group_depth == 0) return set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu group_end without group_start");
  if (--t_group_depth > 0) return OAR_SUCCESS;
  std::vector<PendingRecv> todo;
  todo.swap(t_pending_recvs);
  OAR_Status first = OAR_SUCCESS;
  for (const PendingRecv& p : todo) {
    OAR_Status s = recv_now(p.buf, p.count, p.dtype, p.peer, p.comm);
    if (first == OAR_SUCCESS) first = s;
  }
  return first;
}

const ExtendTable ext([](OAR_DeviceInterface& t) {
  t.get_unique_id = get_unique_id;
  t.comm_init_rank = comm_init_rank;
  t.comm_destroy = comm_destroy;
  t.all_reduce = all_reduce;
  t.broadcast = broadcast;
  t.reduce = reduce;
  t.all_gather = all_gather;
  t.reduce_scatter = reduce_scatter;
  t.all_to_all = all_to_all;
  t.send = send;
  t.recv = recv;
  t.group_start = group_start;
  t.group_end = group_end;
});

}  // namespace
}  // namespace custom_cpu
